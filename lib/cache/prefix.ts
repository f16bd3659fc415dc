// Helpers shared by the stores for operator invalidation of whole URL "directories"
// (purge / expire / hardpurge of document 1), which address entries by URL prefix.

/** What an invalidation does to matching entries; omitted fields are left as they are. */
export interface PrefixMark {
  /** 0 none, 1 purged (restorable), 2 expired by command (see CacheEntryMeta.invalidated). */
  invalidated?: number;
  /** New freshness end, e.g. now for `expire`, now + sec for `expireafter`. */
  staleAt?: number;
}

/** Index-row flag bits (the Purge / HardPurge / expired columns of the cache file record). */
export const FLAG_PURGE = 1;
export const FLAG_HARDPURGE = 2;
export const FLAG_EXPIRED = 4;

/** Flag bits implied by an `invalidated` state, so both views of the same fact agree. */
export function flagsForInvalidated(flags: number, invalidated: number): number {
  const base = flags & ~(FLAG_PURGE | FLAG_EXPIRED);
  if (invalidated === 1) return base | FLAG_PURGE;
  if (invalidated === 2) return base | FLAG_EXPIRED;
  return base;
}

/**
 * Smallest string greater than every string starting with `prefix`, so `url >= prefix AND url <
 * upper` is an index range. SQLite compares TEXT as UTF-8 bytes, which orders like code points
 * for BMP characters outside the surrogate range; otherwise undefined is returned and callers
 * fall back to an open-ended range plus an explicit prefix check.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  if (prefix === '') return undefined;
  const last = prefix.charCodeAt(prefix.length - 1);
  if (last >= 0xd7ff && last <= 0xdfff) return undefined;
  if (last >= 0xffff) return undefined;
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}
