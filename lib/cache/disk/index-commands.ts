// The operator commands of the purge family over the shared index, for DiskStore: rows chosen
// by URL prefix, exact URL or cache tag, each page of rows one short IMMEDIATE transaction with
// requests served in between; whole subtrees and tags marked by set-based updates
// (range-marks.ts). Kept apart from the store's request path so each stays readable.
import type { IndexDb, LightRow, Released } from '../index-db.js';
import { prefixUpperBound, type PrefixMark } from '../prefix.js';
import { RangeMarks, type RangeKind, type RangeMarkOptions } from '../range-marks.js';

/** What a command reads of a row to choose it. */
export interface PrefixRowView { url: string; size: number; invalidated: number; staleAt: number; cachedAt: number }

/** What an operator command does to a row it picked: removes it, leaves a tombstone, or marks it. */
type RowAct = 'remove' | 'tombstone' | ((r: PrefixRowView) => PrefixMark);

export class IndexCommands {
  private rangeMarks: RangeMarks | undefined;

  constructor(private readonly index: IndexDb, private readonly now: () => number,
    private readonly unlinkAll: (released: Released) => Promise<void>) {}

  /**
   * Operator commands over a URL prefix (the purge family): `pick` selects rows by a light view
   * (no header parsing, so 100,000 rows stay cheap), `act` removes them, leaves a hard-purge
   * tombstone, or gives each its mark. `exact`: the rows of that one URL only (a keyed lookup,
   * not a range). Returns how many rows were acted on and their body bytes.
   */
  async applyByPrefix(vhost: string, prefix: string, pick: (r: PrefixRowView) => boolean,
    act: RowAct, exact = false): Promise<{ count: number; size: number }> {
    let after: [string, string] | undefined;
    return this.applyPages((): LightRow[] => {
      const rows = exact ? (after === undefined ? this.index.rowsOfUrl(vhost, prefix) : []) : this.index.lightPage(vhost, prefix, after, 2000);
      if (rows.length > 0) { const last = rows[rows.length - 1]!; after = [last.url, last.variant]; }
      return rows;
    }, pick, act);
  }

  /** Purge / expire / expireafter of every row tagged `tag` by set-based page updates (range-marks.ts). */
  async markTag(vhost: string, tag: string, kind: RangeKind, o: RangeMarkOptions): Promise<{ count: number; size: number }> {
    const marks = this.rangeMarks ??= new RangeMarks(this.index.db);
    let count = 0;
    let size = 0;
    for (let lo = 0, pages = 0; pages < 1_000_000; pages++) {
      const hi = marks.tagPageEnd(vhost, tag, lo) ?? Number.MAX_SAFE_INTEGER;
      const page = this.index.batch(() => marks.markTagPage(vhost, tag, lo, hi, kind, o));
      count += page.count;
      size += page.size;
      if (hi === Number.MAX_SAFE_INTEGER) break;
      lo = hi;
      await new Promise((r) => setImmediate(r));
    }
    return { count, size };
  }

  /** As applyByPrefix, over the rows the origin tagged `tag` (entry_tags, in id order): hardpurge. */
  async applyByTag(vhost: string, tag: string, pick: (r: PrefixRowView) => boolean, act: RowAct): Promise<{ count: number; size: number }> {
    let after = 0;
    return this.applyPages((): LightRow[] => {
      const rows = this.index.tagPage(vhost, tag, after, 2000);
      if (rows.length > 0) after = rows[rows.length - 1]!.id;
      return rows;
    }, pick, act);
  }

  /** `page` gives the next page of rows (2,000 at most), each acted on in one short transaction. */
  private async applyPages(page: () => LightRow[], pick: (r: PrefixRowView) => boolean, act: RowAct): Promise<{ count: number; size: number }> {
    const now = this.now();
    let count = 0;
    let size = 0;
    // Requests are served between the pages.
    for (let pages = 0; pages < 1_000_000; pages++) {
      const released: Released = { paths: [] };
      const n = this.index.batch(() => {
        const rows = page();
        for (const r of rows) {
          const view: PrefixRowView = { url: r.url, size: r.size, invalidated: r.invalidated, staleAt: r.stale_at, cachedAt: r.cached_at };
          if (!pick(view)) continue;
          count++;
          size += r.size;
          if (act === 'remove') this.index.removeRow(r, released);
          else if (act === 'tombstone') this.index.tombstoneRow(r, released, now);
          else this.index.markLight(r, act(view), now);
        }
        return rows.length;
      });
      await this.unlinkAll(released);
      if (n < 2000) break;
      await new Promise((r) => setImmediate(r));
    }
    return { count, size };
  }

  /**
   * Purge / expire / expireafter of every object under a prefix by set-based page updates (see
   * range-marks.ts); undefined when the prefix has no index range bound (then applyByPrefix).
   */
  async markRange(vhost: string, prefix: string, kind: RangeKind, o: RangeMarkOptions): Promise<{ count: number; size: number } | undefined> {
    const upper = prefixUpperBound(prefix);
    if (upper === undefined) return undefined;
    const marks = this.rangeMarks ??= new RangeMarks(this.index.db);
    let count = 0;
    let size = 0;
    for (let lo = prefix, pages = 0; lo < upper && pages < 1_000_000; pages++) {
      const hi = marks.pageEnd(vhost, lo, upper);
      const page = this.index.batch(() => marks.markPage(vhost, lo, hi, kind, o));
      count += page.count;
      size += page.size;
      lo = hi;
      // Requests (and the writer threads waiting for the lock) go on between pages.
      if (lo < upper) await new Promise((r) => setImmediate(r));
    }
    return { count, size };
  }
}
