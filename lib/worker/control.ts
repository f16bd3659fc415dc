// The commands a worker runs for the management API (over lib/ipc/rpc.ts): origin state,
// origin reset, invalidation, fileinfo. They read the worker's live hosts and cache.
import { fileRecord } from '../cache/commands/fileinfo.js';
import { runInvalidation, type InvalidateKind } from '../cache/commands/invalidate.js';
import type { RpcOp } from '../ipc/messages.js';
import type { RpcHandlers } from '../ipc/rpc.js';
import { fromWire, type WireTarget } from '../ipc/wire.js';
import type { HostRuntime } from '../pipeline/host-runtime.js';
import type { WorkerCache } from './worker-cache.js';

export interface ControlSource {
  hosts(): Map<string, HostRuntime>;
  cache(): WorkerCache | undefined;
  inflightReaders(vhost: string, url: string): number;
  useOriginEncoding(vhost: string): boolean;
  smallFileMax(): number;
}

function hostsOf(src: ControlSource, vhost: string | undefined): HostRuntime[] {
  const all = [...src.hosts().values()];
  if (vhost === undefined) return all;
  const h = src.hosts().get(vhost);
  if (h === undefined) throw Object.assign(new Error(`virtual host not found: ${vhost}`), { code: 'VHOST_NOT_FOUND' });
  return [h];
}

/** Every RPC operation but 'drop-hosts' (worker.ts serves that one). */
export function controlHandlers(src: ControlSource): RpcHandlers<Exclude<RpcOp, 'drop-hosts'>> {
  return {
    'origin-status': ({ vhost }: { vhost?: string }) => hostsOf(src, vhost).map((h) => h.origin.status()),
    'reset-origin': ({ vhost }: { vhost?: string }) => { for (const h of hostsOf(src, vhost)) h.origin.reset(); return null; },
    /** Waits for this worker's writes under the targets, so a command on the shared index sees them. */
    settle: async ({ targets }: { targets: WireTarget[] }) => {
      const stage = src.cache()?.stage;
      if (stage !== undefined) for (const t of targets) await stage.settledUnder(t.vhost, t.prefix);
      return null;
    },
    'all-excluded': ({ vhosts }: { vhosts: string[] }) => vhosts.filter((v) => src.hosts().get(v)?.origin.allExcluded() === true),
    invalidate: async ({ kind, targets, sec, before, excluded }: { kind: InvalidateKind; targets: WireTarget[]; sec?: number; before?: number; excluded?: string[] }) => {
      const cache = src.cache();
      if (cache === undefined) throw Object.assign(new Error('cache not open'), { code: 'RT_NOT_RUNNING' });
      for (const t of targets) await cache.stage.settledUnder(t.vhost, t.prefix);
      // The primary decides "every origin excluded" over all workers' views.
      const skip = new Set(excluded ?? []);
      return runInvalidation(cache.store, cache.invalidations, kind, targets.map(fromWire), { sec, before, allExcluded: (vhost) => skip.has(vhost) });
    },
    prectrl: ({ entries }: { entries: { vhost: string; kind: InvalidateKind; target: WireTarget; queuedAt: number }[] }) => {
      src.cache()?.stage.setPrectrl(entries.map((e) => ({ vhost: e.vhost, kind: e.kind, target: fromWire(e.target), queuedAt: e.queuedAt })));
      return null;
    },
    fileinfo: async ({ vhost, url }: { vhost: string; url: string }) => {
      const cache = src.cache();
      if (cache === undefined) throw Object.assign(new Error('cache not open'), { code: 'RT_NOT_RUNNING' });
      const now = Date.now();
      const ctx = { now, useOriginEncoding: src.useOriginEncoding(vhost), smallFileMax: src.smallFileMax(), downloaders: src.inflightReaders(vhost, url) };
      const disk = cache.store.disk.listByPrefix(vhost, url, 1000).filter((r) => r.key.url === url);
      const seen = new Set(disk.map((r) => r.variantKey));
      const memoryOnly = cache.store.memory.listByPrefix(vhost, url).filter((m) => m.key.url === url && !seen.has(m.variantKey));
      return [...disk, ...memoryOnly].map((e) => fileRecord(e, ctx));
    },
  };
}
