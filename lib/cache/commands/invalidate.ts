// The invalidation commands of document 1 as they act on the cache of the node: purge
// (invalidated, re-fetched on next access, restored if the origin then fails), expire (next
// access revalidates), expireafter (expiry = now + sec), hardpurge (body deleted for good; a
// tombstone row shows HardPurge until the next fetch). The shared index is changed once by the
// worker that runs the command, which drops its own memory copies; the caller has every other
// worker drop theirs (the Invalidation items) before it answers.
import type { PrefixRowView } from '../disk-store.js';
import type { MemoryObject } from '../memory-object.js';
import { INVALIDATED_HARDPURGED, type PrefixMark } from '../prefix.js';
import type { TieredStore } from '../tiered-store.js';
import type { Target } from './targets.js';
import { countCacheEvent } from '../events.js';

export type InvalidateKind = 'purge' | 'expire' | 'expireafter' | 'hardpurge';

export interface InvalidateResult { Count: number; Size: number; Time: number }

/** What every worker drops from its memory tier after an invalidation. */
export interface Invalidation {
  vhost: string;
  /** Exact URL, or a prefix when `prefix` is true (directory and wildcard targets). */
  url: string;
  prefix: boolean;
  /** Instead of a URL: every copy the origin tagged so (`url` is then ''). */
  tag?: string;
}

/** The memory copies a command on these targets concerns (a pattern's whole prefix: a superset). */
export function memoryItems(targets: readonly Target[]): Invalidation[] {
  return targets.map((t) => (t.tag === undefined ? { vhost: t.vhost, url: t.prefix, prefix: t.wildcard } : { vhost: t.vhost, url: '', prefix: false, tag: t.tag }));
}

export interface InvalidateOptions {
  /** For expireafter: seconds from now. */
  sec?: number;
  /** Whether the host's every origin address is excluded (then purge does nothing). */
  allExcluded?: (vhost: string) => boolean;
  /**
   * Only copies cached before this time (epoch ms): a queued command leaves alone what pre-cache
   * control already refreshed while it waited.
   */
  before?: number;
}

function selects(t: Target): (url: string) => boolean {
  if (t.tag !== undefined) return () => true; // the rows are those of the tag already
  if (!t.wildcard) return (url) => url === t.prefix;
  const m = t.match;
  return m === undefined ? () => true : (url) => m.test(url);
}

interface Plan { pick: (r: PrefixRowView) => boolean; act: 'tombstone' | ((r: PrefixRowView) => PrefixMark) }

function planFor(kind: InvalidateKind, urlMatches: (url: string) => boolean, now: number, opts: InvalidateOptions): Plan {
  const before = opts.before ?? Infinity;
  // A hard-purged tombstone is no content: no command counts or changes it.
  const base = (r: PrefixRowView): boolean => r.invalidated !== INVALIDATED_HARDPURGED && r.cachedAt < before && urlMatches(r.url);
  switch (kind) {
    case 'purge':
      // An object already purged is not counted (or purged) again.
      return { pick: (r) => r.invalidated !== 1 && base(r), act: () => ({ invalidated: 1 }) };
    case 'expire':
      // A purged object stays purged: expiring it would let a 304 bring the old content back.
      return { pick: base, act: (r) => ({ invalidated: r.invalidated === 1 ? 1 : 2, staleAt: Math.min(r.staleAt, now) }) };
    case 'expireafter': {
      const at = now + (opts.sec ?? 86400) * 1000;
      // deleteAt moves too: the sweep drops rows past it, whatever their new expiry says.
      return { pick: base, act: () => ({ staleAt: at, deleteAt: at }) };
    }
    case 'hardpurge':
      return { pick: base, act: 'tombstone' };
  }
}

/** The CacheFileEvent each command is counted as (a hard purge deletes: an Erase). */
const EVENT_OF = { purge: 'purge', expire: 'expire', expireafter: 'expire', hardpurge: 'erase' } as const;

export async function runInvalidation(store: TieredStore, kind: InvalidateKind,
  targets: readonly Target[], opts: InvalidateOptions = {}): Promise<InvalidateResult> {
  const started = Date.now();
  let count = 0;
  let size = 0;
  const before = opts.before ?? Infinity;
  for (const t of targets) {
    if (kind === 'purge' && opts.allExcluded?.(t.vhost)) continue;
    const urlMatches = selects(t);
    const { pick, act } = planFor(kind, urlMatches, Date.now(), opts);
    // A whole subtree (no pattern) and a tag are marked by set-based updates; patterns, exact
    // URLs and hardpurge (which deletes body files) go row by row.
    const marks = { now: Date.now(), before: Math.min(before, Number.MAX_SAFE_INTEGER), at: Date.now() + (opts.sec ?? 86400) * 1000 };
    const disk = t.tag !== undefined
      ? (kind === 'hardpurge' ? await store.disk.commands.applyByTag(t.vhost, t.tag, pick, act) : await store.disk.commands.markTag(t.vhost, t.tag, kind, marks))
      : (t.wildcard && t.match === undefined && kind !== 'hardpurge'
        ? await store.disk.commands.markRange(t.vhost, t.prefix, kind, marks)
        : undefined) ?? await store.disk.commands.applyByPrefix(t.vhost, t.prefix, pick, act, !t.wildcard);
    const counted = count;
    count += disk.count;
    size += disk.size;
    // Memory copies are dropped (the disk row carries the new state); objects that live only in
    // memory (volatile hosts) are counted here. An exact target is a keyed lookup, not a walk.
    const inMemory: MemoryObject[] = t.tag !== undefined
      ? store.memory.listTagged(t.vhost, t.tag)
      : t.wildcard
        ? store.memory.listByPrefix(t.vhost, t.prefix)
        : store.memory.variantsSync({ vhost: t.vhost, url: t.prefix });
    for (const m of inMemory) {
      if (!urlMatches(m.key.url) || m.cachedAt >= before) continue;
      if (m.volatile && (kind !== 'purge' || m.invalidated !== 1)) { count++; size += m.size; }
      store.memory.deleteSync(m.key, m.variantKey);
    }
    countCacheEvent(t.vhost, EVENT_OF[kind], count - counted);
  }
  return { Count: count, Size: size, Time: Date.now() - started };
}
