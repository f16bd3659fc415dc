// One invalidation on the Redis bus: the fields of its stream entry, written by the node that
// received the call and read by every node (bus.ts). Targets travel as resolved where they were
// received (virtual host and the target as given), so a target without a host means the same
// host on every node.
import type { InvalidateKind } from '../../cache/commands/invalidate.js';

export interface BusEntry {
  kind: InvalidateKind;
  targets: Array<{ vhost: string; text: string }>;
  /** expireafter seconds. */
  sec?: number;
  /** The bus name of the node that appended it. */
  node: string;
}

const KINDS: readonly string[] = ['purge', 'expire', 'expireafter', 'hardpurge'];

export function entryFields(e: BusEntry): string[] {
  const f = ['kind', e.kind, 'targets', JSON.stringify(e.targets), 'node', e.node];
  if (e.sec !== undefined) f.push('sec', String(e.sec));
  return f;
}

/** The entry of a stream item's fields; undefined when it is not one of ours (it is skipped). */
export function parseEntry(fields: string[]): BusEntry | undefined {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) m.set(fields[i]!, fields[i + 1]!);
  const kind = m.get('kind');
  const node = m.get('node');
  if (kind === undefined || !KINDS.includes(kind) || node === undefined) return undefined;
  let targets: unknown;
  try { targets = JSON.parse(m.get('targets') ?? ''); } catch { return undefined; }
  if (!Array.isArray(targets) || !targets.every((t) => typeof t?.vhost === 'string' && typeof t?.text === 'string')) return undefined;
  const sec = m.get('sec');
  return { kind: kind as InvalidateKind, targets: targets as BusEntry['targets'], node, ...(sec === undefined ? {} : { sec: Number(sec) }) };
}

/** Stream ids compare as `ms-seq` pairs. */
export function idAfter(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am > bm || (am === bm && as > bs);
}
