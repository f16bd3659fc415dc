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
import type Database from 'better-sqlite3';
import type { IndexDb } from '../index-db.js';
import { flagsForInvalidated } from '../prefix.js';
import { freshenedBy304, notModifiedPatch } from '../policy/not-modified.js';
import type { StoredHeaders } from '../store.js';
import type { FreshenItem } from './protocol.js';

/** What a 304 reads of a row: the columns it decides by and changes, not the whole row. */
interface FreshenRow { id: number; variant: string; status: number; headers: string; invalidated: number; flags: number; updated_at: number }

export class RowFreshener {
  private readonly rows: Database.Statement;
  private readonly set: Database.Statement;

  constructor(private readonly index: IndexDb) {
    this.rows = index.db.prepare('SELECT id, variant, status, headers, invalidated, flags, updated_at FROM entries WHERE vhost = ? AND url = ?');
    // Positional: binding named parameters from an object costs a property lookup each.
    this.set = index.db.prepare(`UPDATE entries SET headers = ?, request_time = ?, cached_at = ?, stale_at = ?, delete_at = ?,
      invalidated = 0, flags = ?, updated_at = ? WHERE id = ?`);
  }

  /** Freshens the rows of the item's URL that its 304 selects; returns how many. */
  freshen(it: FreshenItem, now: number): number {
    let n = 0;
    for (const r of this.rows.all(it.vhost, it.url) as FreshenRow[]) {
      if (r.updated_at >= it.requestTime) continue;
      const headers = JSON.parse(r.headers) as StoredHeaders;
      if (!freshenedBy304({ variantKey: r.variant, invalidated: r.invalidated, headers }, it.variant, it.headers)) continue;
      if (r.invalidated !== 0 && this.index.invalidatedSince(it.vhost, it.url, it.requestTime) !== null) continue;
      const p = notModifiedPatch({ status: r.status, headers }, it.headers, it.requestTime, it.receivedAt, it.policy);
      this.set.run(JSON.stringify(p.headers), p.requestTime, p.cachedAt, p.staleAt, p.deleteAt, flagsForInvalidated(r.flags, 0), now, r.id);
      n++;
    }
    return n;
  }
}
