// The index side of a 304 (RFC 9111 4.3.4), in the writer thread: the request path freshens the
// copies its memory tier holds at once and hands the 304 here, where the URL's rows are read and
// every variant the 304 selects is freshened. Reading them on the request path was a synchronous
// SQLite query per 304 (a fifth of a worker's time when every request was revalidated).
//
// The 304s of an object are coalesced before they come here (DiskStore.freshen: the latest in
// about a second), so a row may be freshened later than its memory copy, and by a 304 whose
// request was sent long before. That must never undo what happened meanwhile: a row changed after
// the request was sent (updated_at: an invalidation's mark, a new body, another 304) keeps what it
// has, and an expired row stays expired when an invalidation of its URL was logged since (an
// unsafe method marks no row that is already expired). A row is never made fresher than the 304
// made it; a copy persisted later, or not at all (a crash), is only staler after a restart.
import type { IndexDb } from '../index-db.js';
import type { IndexRow } from '../index-schema.js';
import { flagsForInvalidated } from '../prefix.js';
import { freshenedBy304, notModifiedPatch } from '../policy/not-modified.js';
import type { StoredHeaders } from '../store.js';
import type { FreshenItem } from './protocol.js';

/** Freshens the rows of the item's URL that its 304 selects; returns how many. */
export function freshenRows(index: IndexDb, it: FreshenItem, now: number): number {
  let n = 0;
  for (const r of index.rowsOfUrl(it.vhost, it.url)) {
    if (r.updated_at >= it.requestTime) continue;
    const headers = JSON.parse(r.headers) as StoredHeaders;
    if (!freshenedBy304({ variantKey: r.variant, invalidated: r.invalidated, headers }, it.variant, it.headers)) continue;
    if (r.invalidated !== 0 && index.invalidatedSince(it.vhost, it.url, it.requestTime) !== null) continue;
    index.updateRow(freshened(r, headers, it, now));
    n++;
  }
  return n;
}

function freshened(r: IndexRow, headers: StoredHeaders, it: FreshenItem, now: number): IndexRow {
  const p = notModifiedPatch({ status: r.status, headers }, it.headers, it.requestTime, it.receivedAt, it.policy);
  return {
    ...r, headers: JSON.stringify(p.headers), request_time: p.requestTime, cached_at: p.cachedAt, stale_at: p.staleAt,
    delete_at: p.deleteAt, invalidated: 0, flags: flagsForInvalidated(r.flags, 0), updated_at: now,
  };
}
