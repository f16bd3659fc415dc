// The invalidation commands of document 1 as they act on the cache of the node: purge
// (invalidated, re-fetched on next access, restored if the origin then fails), expire (next
// access revalidates), expireafter (expiry = now + sec), hardpurge (deleted for good). The
// shared index is changed once by the worker that runs the command; the invalidation log makes
// every other worker drop its memory copies.
import type { InvalidationLog } from '../invalidation-log.js';
import type { PrefixMark } from '../prefix.js';
import type { TieredStore } from '../tiered-store.js';
import type { Target } from './targets.js';

export type InvalidateKind = 'purge' | 'expire' | 'expireafter' | 'hardpurge';

export interface InvalidateResult { Count: number; Size: number; Time: number }

export interface InvalidateOptions {
  /** For expireafter: seconds from now. */
  sec?: number;
  /** Whether the host's every origin address is excluded (then purge does nothing). */
  allExcluded?: (vhost: string) => boolean;
}

function selects(t: Target): (url: string) => boolean {
  if (!t.wildcard) return (url) => url === t.prefix;
  const m = t.match;
  return m === undefined ? () => true : (url) => m.test(url);
}

export async function runInvalidation(store: TieredStore, log: InvalidationLog | undefined, kind: InvalidateKind,
  targets: readonly Target[], opts: InvalidateOptions = {}): Promise<InvalidateResult> {
  const started = Date.now();
  let count = 0;
  let size = 0;
  const now = Date.now();
  for (const t of targets) {
    if (kind === 'purge' && opts.allExcluded?.(t.vhost)) continue;
    const urlMatches = selects(t);
    let pick: (r: { url: string; invalidated: number }) => boolean = (r) => urlMatches(r.url);
    let act: 'remove' | ((r: { staleAt: number }) => PrefixMark);
    switch (kind) {
      case 'purge':
        // An object already purged is not counted (or purged) again.
        pick = (r) => r.invalidated !== 1 && urlMatches(r.url);
        act = () => ({ invalidated: 1 });
        break;
      case 'expire':
        act = (r) => ({ invalidated: 2, staleAt: Math.min(r.staleAt, now) });
        break;
      case 'expireafter': {
        const at = now + (opts.sec ?? 86400) * 1000;
        act = () => ({ staleAt: at });
        break;
      }
      case 'hardpurge':
        act = 'remove';
        break;
    }
    const disk = await store.disk.applyByPrefix(t.vhost, t.prefix, pick, act);
    count += disk.count;
    size += disk.size;
    // Memory copies are dropped (the disk row carries the new state); objects that live only in
    // memory (volatile hosts) are counted here.
    for (const m of store.memory.listByPrefix(t.vhost, t.prefix)) {
      if (!urlMatches(m.key.url)) continue;
      if (m.volatile && (kind !== 'purge' || m.invalidated !== 1)) { count++; size += m.size; }
      store.memory.deleteSync(m.key, m.variantKey);
    }
  }
  log?.record(targets.map((t) => ({ vhost: t.vhost, url: t.prefix, prefix: t.wildcard })));
  return { Count: count, Size: size, Time: Date.now() - started };
}
