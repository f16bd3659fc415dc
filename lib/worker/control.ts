// The commands a worker runs for the management API (over lib/ipc/rpc.ts): origin state,
// origin reset, invalidation, fileinfo, pre-cache control (prectrl-handlers.ts); and its part of
// any worker's invalidation (settle, drop-memory). They read the worker's live hosts and cache.
import { fileRecords } from '../cache/commands/fileinfo.js';
import { runInvalidation, type InvalidateKind, type Invalidation } from '../cache/commands/invalidate.js';
import type { RpcOp } from '../ipc/messages.js';
import type { RpcHandlers } from '../ipc/rpc.js';
import { codedError } from '../errors/codes.js';
import { fromWire, type WireTarget } from '../ipc/wire.js';
import type { HostRuntime } from '../pipeline/parts/host-runtime.js';
import type { WorkerCache } from './worker-cache.js';
import type { QueuedCommands } from '../pipeline/parts/queued-commands.js';
import { prectrlHandlers } from './prectrl-handlers.js';

export interface ControlSource {
  hosts(): Map<string, HostRuntime>;
  cache(): WorkerCache | undefined;
  /** The waiting asynchronous commands (pre-cache control), held before the cache opens too. */
  prectrl(): QueuedCommands;
  inflightReaders(vhost: string, url: string): number;
  useOriginEncoding(vhost: string): boolean;
  smallFileMax(): number;
}

function hostsOf(src: ControlSource, vhost: string | undefined): HostRuntime[] {
  const all = [...src.hosts().values()];
  if (vhost === undefined) return all;
  const h = src.hosts().get(vhost);
  if (h === undefined) throw codedError('VHOST_NOT_FOUND', vhost);
  return [h];
}

/** Every RPC operation but 'drop-hosts' and 'tls-status' (main.ts serves those). */
export function controlHandlers(src: ControlSource): RpcHandlers<Exclude<RpcOp, 'drop-hosts' | 'tls-status'>> {
  return {
    'origin-status': ({ vhost }: { vhost?: string }) => hostsOf(src, vhost).map((h) => h.origin.status()),
    'reset-origin': ({ vhost }: { vhost?: string }) => { for (const h of hostsOf(src, vhost)) h.origin.reset(); return null; },
    /** Before a command changes the shared index (CacheStage.settle). */
    settle: async ({ targets }: { targets: WireTarget[] }) => {
      const stage = src.cache()?.stage;
      if (stage !== undefined) await Promise.all(targets.map((t) => stage.settle(fromWire(t))));
      return null;
    },
    /** After an invalidation by another worker or a command: before its answer. */
    'drop-memory': ({ items }: { items: Invalidation[] }) => {
      const stage = src.cache()?.stage;
      if (stage !== undefined) for (const i of items) stage.dropMemory(i);
      return null;
    },
    'all-excluded': ({ vhosts }: { vhosts: string[] }) => vhosts.filter((v) => src.hosts().get(v)?.origin.allExcluded() === true),
    invalidate: async ({ kind, targets, sec, before, excluded }: { kind: InvalidateKind; targets: WireTarget[]; sec?: number; before?: number; excluded?: string[] }) => {
      const cache = src.cache();
      if (cache === undefined) throw codedError('RT_NOT_RUNNING');
      // Every worker settled before this command; what this one started fetching since retires too.
      const wire = targets.map(fromWire);
      await Promise.all(wire.map((t) => cache.stage.settle(t)));
      // The primary decides "every origin excluded" over all workers' views.
      const skip = new Set(excluded ?? []);
      return runInvalidation(cache.store, kind, wire, { sec, before, allExcluded: (vhost) => skip.has(vhost) });
    },
    ...prectrlHandlers(src.prectrl, (e) => { void src.cache()?.stage.settle(e.target); }),
    fileinfo: async ({ vhost, url }: { vhost: string; url: string }) => {
      const cache = src.cache();
      if (cache === undefined) throw codedError('RT_NOT_RUNNING');
      const now = Date.now();
      const ctx = { now, useOriginEncoding: src.useOriginEncoding(vhost), smallFileMax: src.smallFileMax(), downloaders: src.inflightReaders(vhost, url) };
      const disk = cache.store.disk.listByPrefix(vhost, url, 1000).filter((r) => r.key.url === url);
      const seen = new Set(disk.map((r) => r.variantKey));
      const memoryOnly = cache.store.memory.listByPrefix(vhost, url).filter((m) => m.key.url === url && !seen.has(m.variantKey));
      return fileRecords([...disk, ...memoryOnly], ctx);
    },
  };
}
