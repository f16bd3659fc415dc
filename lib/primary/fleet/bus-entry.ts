// One invalidation on the Redis bus: the fields of its stream entry, written by the node that
// received the call and read by every node (bus.ts). Targets travel as resolved where they were
// received (virtual host and the target as given), so a target without a host means the same
// host on every node.
//
// An entry is bounded (MAX_ENTRY_TARGETS targets, MAX_ENTRY_BYTES of targets JSON): a larger
// invalidation is appended as several entries (`entrySlices`), so no node ever has to parse or
// apply one huge entry at once. What a node reads from the bus is untrusted (anything that can
// write to the bus's Redis can append): an entry over either bound was not written by a node
// and is refused whole, before its targets are parsed, rather than split, since splitting on
// read would still cost the parse of an entry of any size.
import type { InvalidateKind } from '../../cache/commands/invalidate.js';

export interface BusEntry {
  kind: InvalidateKind;
  /** A target with `tag` is that cache tag on `vhost` (its `text` is only for the logs). */
  targets: Array<{ vhost: string; text: string; tag?: string }>;
  /** expireafter seconds. */
  sec?: number;
  /** The bus name of the node that appended it. */
  node: string;
}

/** An entry of ours that breaks a bound: it is logged (without its targets) and passed. */
export interface RefusedEntry { refused: string; node: string }

/** Targets one entry carries at most. */
export const MAX_ENTRY_TARGETS = 1000;
/** Bytes (UTF-8) of one entry's targets JSON at most: a few long URLs weigh as much as many short ones. */
export const MAX_ENTRY_BYTES = 256 * 1024;

const KINDS: readonly string[] = ['purge', 'expire', 'expireafter', 'hardpurge'];

/** The stream fields of an entry whose `targets` is already the JSON text of its targets. */
function fields(e: Omit<BusEntry, 'targets'>, targetsJson: string): string[] {
  const f = ['kind', e.kind, 'targets', targetsJson, 'node', e.node];
  if (e.sec !== undefined) f.push('sec', String(e.sec));
  return f;
}

/**
 * The stream fields of the entries that carry `e`, each within both bounds, in target order.
 * A target that alone is over MAX_ENTRY_BYTES goes in no entry: it is handed to `tooLarge`.
 */
export function* entrySlices(e: BusEntry, tooLarge: (target: BusEntry['targets'][number]) => void): Generator<string[]> {
  let parts: string[] = [];
  let bytes = 2; // the brackets
  for (const t of e.targets) {
    const json = JSON.stringify(t.tag === undefined ? { vhost: t.vhost, text: t.text } : { vhost: t.vhost, text: t.text, tag: t.tag });
    const size = Buffer.byteLength(json) + 1; // and its comma
    if (size + 2 > MAX_ENTRY_BYTES) { tooLarge(t); continue; }
    if (parts.length === MAX_ENTRY_TARGETS || bytes + size > MAX_ENTRY_BYTES) {
      yield fields(e, `[${parts.join(',')}]`);
      parts = [];
      bytes = 2;
    }
    parts.push(json);
    bytes += size;
  }
  if (parts.length > 0) yield fields(e, `[${parts.join(',')}]`);
}

/**
 * The entry of a stream item's fields; undefined when it is not one of ours (it is skipped), a
 * RefusedEntry when it is over a bound (checked on the raw text first, so an entry of any size
 * costs no parse).
 */
export function parseEntry(fields: string[]): BusEntry | RefusedEntry | undefined {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) m.set(fields[i]!, fields[i + 1]!);
  const kind = m.get('kind');
  const node = m.get('node');
  if (kind === undefined || !KINDS.includes(kind) || node === undefined) return undefined;
  const raw = m.get('targets') ?? '';
  const bytes = Buffer.byteLength(raw);
  if (bytes > MAX_ENTRY_BYTES) return { refused: `targets of ${bytes} bytes, over ${MAX_ENTRY_BYTES}`, node };
  let targets: unknown;
  try { targets = JSON.parse(raw); } catch { return undefined; }
  if (!Array.isArray(targets) || !targets.every((t) => typeof t?.vhost === 'string' && typeof t?.text === 'string' && (t.tag === undefined || typeof t.tag === 'string'))) return undefined;
  if (targets.length > MAX_ENTRY_TARGETS) return { refused: `${targets.length} targets, over ${MAX_ENTRY_TARGETS}`, node };
  const sec = m.get('sec');
  return { kind: kind as InvalidateKind, targets: targets as BusEntry['targets'], node, ...(sec === undefined ? {} : { sec: Number(sec) }) };
}

/** The first few target texts and how many there are: what a log line about an entry carries. */
export function targetsForLog(targets: BusEntry['targets']): { targets: string[]; count: number } {
  return { targets: targets.slice(0, 5).map((t) => t.text.slice(0, 200)), count: targets.length };
}

/** Stream ids compare as `ms-seq` pairs. */
export function idAfter(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am > bm || (am === bm && as > bs);
}
