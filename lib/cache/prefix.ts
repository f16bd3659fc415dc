// Helpers shared by the stores for operator invalidation of whole URL "directories"
// (purge / expire / hardpurge of document 1), which address entries by URL prefix.

/** What an invalidation does to matching entries; omitted fields are left as they are. */
export interface PrefixMark {
  /** 0 none, 1 purged (restorable), 2 expired by command, 3 hard-purged (INVALIDATED_HARDPURGED). */
  invalidated?: number;
  /** New freshness end, e.g. now for `expire`, now + sec for `expireafter`. */
  staleAt?: number;
  /**
   * Earliest new deletion time (expireafter): the row is kept at least until then plus the stale
   * window it had (deleteAt - staleAt), so the sweep cannot drop it before its new expiry.
   */
  deleteAt?: number;
}

/** deleteAt for a row whose freshness now ends at `staleAt`, keeping its stale window; 0 = never. */
export function deleteAtAfter(row: { staleAt: number; deleteAt: number }, staleAt: number): number {
  if (row.deleteAt === 0) return 0;
  return Math.max(row.deleteAt, staleAt + Math.max(0, row.deleteAt - row.staleAt));
}

/** Index-row flag bits (the Purge / HardPurge / expired columns of the cache file record). */
export const FLAG_PURGE = 1;
export const FLAG_HARDPURGE = 2;
export const FLAG_EXPIRED = 4;

/**
 * `invalidated` of a hard-purged row: its body is deleted and it is never served or restored;
 * the body-less row stays (fileinfo shows HardPurge Y) until the next fetch replaces it.
 */
export const INVALIDATED_HARDPURGED = 3;

/** Flag bits implied by an `invalidated` state, so both views of the same fact agree. */
export function flagsForInvalidated(flags: number, invalidated: number): number {
  const base = flags & ~(FLAG_PURGE | FLAG_EXPIRED | FLAG_HARDPURGE);
  if (invalidated === 1) return base | FLAG_PURGE;
  if (invalidated === 2) return base | FLAG_EXPIRED;
  if (invalidated === INVALIDATED_HARDPURGED) return base | FLAG_HARDPURGE;
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
