// Purge, expire and expireafter of a whole URL subtree (`host/dir/*`) as set-based UPDATEs over
// index ranges: SQLite does the per-row work in C, so 100,000 objects are a few short
// transactions instead of 100,000 JavaScript callbacks and statement runs. Pages are cut by URL
// (every variant of a URL lands in the same page) about PAGE_ROWS rows apart, each page one
// IMMEDIATE transaction, so the writer threads wait at most one page for the write lock and
// readers (WAL) never wait. The rules mirror invalidate.ts's per-row plan exactly. A cache tag's
// rows (entry_tags) are marked the same way, in pages cut by row id.
import type Database from 'better-sqlite3';
import { FLAG_EXPIRED, FLAG_HARDPURGE, FLAG_PURGE, INVALIDATED_HARDPURGED } from './prefix.js';

export type RangeKind = 'purge' | 'expire' | 'expireafter';

const PAGE_ROWS = 5000;
const STATE_BITS = FLAG_PURGE | FLAG_EXPIRED | FLAG_HARDPURGE;

/** Rows a command may change: never a hard-purge tombstone; purge skips what is purged already. */
const PICK: Record<RangeKind, string> = {
  purge: `invalidated NOT IN (1, ${INVALIDATED_HARDPURGED}) AND cached_at < @before`,
  expire: `invalidated <> ${INVALIDATED_HARDPURGED} AND cached_at < @before`,
  expireafter: `invalidated <> ${INVALIDATED_HARDPURGED} AND cached_at < @before`,
};

/** Right-hand sides see the row's old values (as markLight's statements do). */
const SET: Record<RangeKind, string> = {
  purge: `invalidated = 1, flags = (flags & ~${STATE_BITS}) | ${FLAG_PURGE}, updated_at = @now`,
  // A purged object stays purged: expiring it would let a 304 bring the old content back.
  expire: `invalidated = CASE WHEN invalidated = 1 THEN 1 ELSE 2 END,
    flags = (flags & ~${STATE_BITS}) | CASE WHEN invalidated = 1 THEN ${FLAG_PURGE} ELSE ${FLAG_EXPIRED} END,
    stale_at = min(stale_at, @now), updated_at = @now`,
  // delete_at moves with the new expiry, keeping the old stale window (prefix.ts deleteAtAfter).
  expireafter: `stale_at = @at, updated_at = @now,
    delete_at = CASE WHEN delete_at = 0 THEN 0 ELSE max(delete_at, @at + max(0, delete_at - stale_at)) END`,
};

const RANGE = 'vhost = @vhost AND url >= @lo AND url < @hi';

interface Statements {
  pageEnd: Database.Statement;
  nextUrl: Database.Statement;
  mark: Record<RangeKind, Database.Statement>;
  tagPageEnd: Database.Statement;
  markTag: Record<RangeKind, Database.Statement>;
}

const TAGGED = `id IN (SELECT entry_id FROM entry_tags WHERE vhost = @vhost AND tag = @tag AND entry_id > @lo AND entry_id <= @hi)`;

export interface RangeMarkOptions { now: number; before: number; at: number }

export class RangeMarks {
  private statements: Statements | undefined;

  constructor(private readonly db: Database.Database) {}

  private s(): Statements {
    if (this.statements !== undefined) return this.statements;
    const per = (sql: (k: RangeKind) => string, pluck = false): Record<RangeKind, Database.Statement> => {
      const prep = (k: RangeKind): Database.Statement => (pluck ? this.db.prepare(sql(k)).pluck() : this.db.prepare(sql(k)));
      return { purge: prep('purge'), expire: prep('expire'), expireafter: prep('expireafter') };
    };
    return this.statements = {
      pageEnd: this.db.prepare(`SELECT url FROM entries WHERE ${RANGE} ORDER BY url LIMIT 1 OFFSET ${PAGE_ROWS}`).pluck(),
      nextUrl: this.db.prepare('SELECT url FROM entries WHERE vhost = @vhost AND url > @lo AND url < @hi ORDER BY url LIMIT 1').pluck(),
      // RETURNING the sizes: one pass over the rows gives both the count and the bytes.
      mark: per((k) => `UPDATE entries SET ${SET[k]} WHERE ${RANGE} AND ${PICK[k]} RETURNING size`, true),
      tagPageEnd: this.db.prepare(`SELECT entry_id FROM entry_tags WHERE vhost = @vhost AND tag = @tag AND entry_id > @lo
        ORDER BY entry_id LIMIT 1 OFFSET ${PAGE_ROWS - 1}`).pluck(),
      markTag: per((k) => `UPDATE entries SET ${SET[k]} WHERE ${TAGGED} AND ${PICK[k]} RETURNING size`, true),
    };
  }

  /**
   * Upper end (exclusive) of the page starting at `lo`: the URL about PAGE_ROWS rows on, never
   * `lo` itself (a URL with that many variants is one page), `hi` for the last page.
   */
  pageEnd(vhost: string, lo: string, hi: string): string {
    const s = this.s();
    const end = s.pageEnd.get({ vhost, lo, hi }) as string | undefined;
    if (end === undefined) return hi;
    if (end > lo) return end;
    return (s.nextUrl.get({ vhost, lo, hi }) as string | undefined) ?? hi;
  }

  /** Last row id (inclusive) of the page of the tag's rows after the id `lo`; undefined for the last page. */
  tagPageEnd(vhost: string, tag: string, lo: number): number | undefined {
    return this.s().tagPageEnd.get({ vhost, tag, lo }) as number | undefined;
  }

  /** Marks the tag's rows with ids in (lo, hi] the command picks; must run inside a transaction. */
  markTagPage(vhost: string, tag: string, lo: number, hi: number, kind: RangeKind, o: RangeMarkOptions): { count: number; size: number } {
    const sizes = this.s().markTag[kind].all({ vhost, tag, lo, hi, now: o.now, before: o.before, at: o.at }) as number[];
    let size = 0;
    for (let i = 0; i < sizes.length; i++) size += sizes[i]!;
    return { count: sizes.length, size };
  }

  /** Marks the rows of [lo, hi) the command picks; must run inside a transaction. */
  markPage(vhost: string, lo: string, hi: string, kind: RangeKind, o: RangeMarkOptions): { count: number; size: number } {
    const s = this.s();
    const params = { vhost, lo, hi, now: o.now, before: o.before, at: o.at };
    const sizes = s.mark[kind].all(params) as number[];
    let size = 0;
    for (let i = 0; i < sizes.length; i++) size += sizes[i]!;
    return { count: sizes.length, size };
  }
}
