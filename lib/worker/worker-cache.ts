// The cache of one worker: its own memory tier in front of the disk store whose SQLite index all
// workers share, and the cache stages that serve through it.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { CacheStage } from '../pipeline/lookup.js';
import { DiskStore } from '../cache/disk-store.js';
import { TieredStore } from '../cache/tiered-store.js';
import { resolvePath } from '../setting/resolve.js';
import { parseSize } from '../setting/size.js';
import type { Setting } from '../setting/types.js';
import type { AccessControl } from '../access/access.js';
import type { Peers } from '../pipeline/parts/context.js';
import type { Transaction } from '../pipeline/parts/transaction.js';
import type { Clock } from '../pipeline/parts/clock.js';
import type { QueuedCommands } from '../pipeline/parts/queued-commands.js';

export interface WorkerCache {
  store: TieredStore;
  stage: CacheStage;
  close(): Promise<void>;
}

export function openCache(setting: Setting, workerIndex: number, handOff: (tx: Transaction) => boolean,
  purgeAccess: () => AccessControl | undefined, peers: Peers | undefined, clock: Clock, prectrl: QueuedCommands): WorkerCache {
  const c = setting.env.cache;
  const disks = c.disks.map((d) => ({ path: resolvePath(setting, d.path), quota: parseSize(d.quota) }));
  const indexPath = resolvePath(setting, c.indexPath);
  // Start-up only (before any request): the directories must exist for the index to open.
  for (const d of disks) mkdirSync(d.path, { recursive: true });
  mkdirSync(path.dirname(indexPath), { recursive: true });
  const disk = new DiskStore({
    disks, indexPath, maxObjectBytes: parseSize(c.maxObjectSize), logPort: setting.env.log.meta.port,
    // One worker sweeps expired rows; the others would only contend for the same rows.
    sweepIntervalMs: workerIndex === 0 ? 60_000 : 0,
  });
  const memoryObjectMax = parseSize(c.memoryObjectMax);
  const store = new TieredStore({ memory: { maxBytes: parseSize(c.memorySize), maxObjectBytes: memoryObjectMax }, disk, memoryObjectMax });
  // Replay buffers of coalesced fetches: per fetch up to an in-memory object, all together 64 MiB
  // (part of the fixed overhead beyond memorySize the README states).
  const stage = new CacheStage({
    store, maxReplayBytes: Math.max(memoryObjectMax, 1 << 20), maxReplayTotalBytes: 64 * 1024 * 1024, handOff, peers, purgeAccess, clock, prectrl,
  });
  return { store, stage, close: () => store.close() };
}
