// Invalidation commands as the primary runs them: parse the targets (hosts by name or alias,
// the most recently used host for targets without one), apply `purge.purge2expire`, and have one
// worker change the shared index (the invalidation log reaches the others' memory).
import { parseTargets, type Target } from '../cache/commands/targets.js';
import type { InvalidateKind, InvalidateResult } from '../cache/commands/invalidate.js';
import { toWire } from '../rt/control.js';
import { VhostTable } from '../rt/vhost-table.js';
import { resolveHosts } from '../setting/load.js';
import type { Setting } from '../setting/types.js';
import type { WorkerBridge } from './rt-bridge.js';

export interface InvalidationOutcome { kind: InvalidateKind; result: InvalidateResult; /** HTTP status: purge.resCodeNoCtrlTarget when nothing matched. */ status: number }

export class InvalidationService {
  private lastHost: string | undefined;
  private tableFor: Setting | undefined;
  private table: VhostTable<{ name: string; enable: boolean; aliases: string[]; listen: null }> | undefined;

  constructor(private readonly bridge: WorkerBridge, private readonly setting: () => Setting) {}

  private knownHost = (name: string): string | undefined => {
    const s = this.setting();
    if (this.tableFor !== s) {
      this.table = new VhostTable(s.hosting.filter((h) => h.enable !== false).map((h) => ({ name: h.name, enable: true, aliases: h.aliases ?? [], listen: null })));
      this.tableFor = s;
    }
    return this.table!.route(name, undefined)?.name;
  };

  /** Parses `url`; throws TargetError (400) for a bad or unknown target. */
  targets(url: string | null): Target[] {
    const list = parseTargets(url, this.knownHost, this.lastHost);
    this.lastHost = list[list.length - 1]!.vhost;
    return list;
  }

  /** purge.purge2expire: ROOT turns purges of a whole site into expire, PATTERN wildcard purges, ALL every purge. */
  private purgeMode(t: Target): InvalidateKind {
    const host = resolveHosts(this.setting()).find((h) => h.name === t.vhost);
    const mode = host?.functions.network.cache.purge.purge2expire ?? 'NONE';
    if (mode === 'ALL') return 'expire';
    if (mode === 'PATTERN' && t.wildcard) return 'expire';
    if (mode === 'ROOT' && t.prefix === '/' && (t.wildcard || t.text.endsWith('/'))) return 'expire';
    return 'purge';
  }

  async run(kind: InvalidateKind, targets: Target[], sec?: number): Promise<InvalidationOutcome> {
    const groups = new Map<InvalidateKind, Target[]>();
    for (const t of targets) {
      const k = kind === 'purge' ? this.purgeMode(t) : kind;
      groups.set(k, [...(groups.get(k) ?? []), t]);
    }
    const total: InvalidateResult = { Count: 0, Size: 0, Time: 0 };
    for (const [k, list] of groups) {
      const r = await this.bridge.call<InvalidateResult>('invalidate', { kind: k, targets: list.map(toWire), sec });
      total.Count += r.Count; total.Size += r.Size; total.Time += r.Time;
    }
    const host = resolveHosts(this.setting()).find((h) => h.name === targets[0]!.vhost);
    const noTarget = host?.functions.network.cache.purge.resCodeNoCtrlTarget ?? 200;
    return { kind, result: total, status: total.Count === 0 ? noTarget : 200 };
  }

  fileinfo(vhost: string, url: string): Promise<Record<string, unknown>[]> {
    return this.bridge.call<Record<string, unknown>[]>('fileinfo', { vhost, url });
  }
}
