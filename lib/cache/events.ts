// Per-host counts of what happened to cached objects in this process since it started
// (VirtualHost CacheFileEvent): objects written to disk, erased (expiry sweep, hard purge, quota
// eviction by the writer thread), purged and expired by invalidation. Counted where each happens
// (the writer channel, the sweep, runInvalidation), once per object event, never on a hit; the
// statistics reporter reads them.

export interface CacheEvents {
  create: number;
  erase: number;
  purge: number;
  expire: number;
}

const byHost = new Map<string, CacheEvents>();

export function countCacheEvent(vhost: string, kind: keyof CacheEvents, n = 1): void {
  if (n === 0) return;
  let e = byHost.get(vhost);
  if (e === undefined) byHost.set(vhost, (e = { create: 0, erase: 0, purge: 0, expire: 0 }));
  e[kind] += n;
}

/** The counts of a host (undefined when nothing happened to its objects here). */
export function cacheEvents(vhost: string): Readonly<CacheEvents> | undefined {
  return byHost.get(vhost);
}
