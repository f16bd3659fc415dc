// The SQLite index of the disk cache, shared by every worker process of the node (WAL: readers
// never wait for the writer; busy timeout: writers of several processes queue instead of
// failing). Every statement is prepared once; the request path uses only keyed lookups.
import Database from 'better-sqlite3';
import type { MetaPatch } from './disk/protocol.js';
import { COLUMNS, SCHEMA, TAG_TRIGGER, type DiskRow, type IndexRow, type InsertBatch, type LightRow, type NewRow, type Released } from './index-schema.js';
import { deleteAtAfter, flagsForInvalidated, INVALIDATED_HARDPURGED, prefixUpperBound, type PrefixMark } from './prefix.js';

export type { DiskRow, IndexRow, InsertBatch, LightRow, NewRow, Released } from './index-schema.js';

const TOUCH_BUSY_MS = 250;

export interface IndexDbOptions {
  busyTimeoutMs?: number;
  mmapBytes?: number;
  /** False for a second connection of a process whose first one created the tables: opening
   * then takes no write lock (a writer thread starting beside busy sibling workers). */
  createSchema?: boolean;
}

export class IndexDb {
  readonly db: Database.Database;
  private readonly s;
  private readonly busyTimeoutMs: number;

  constructor(file: string, opts: IndexDbOptions = {}) {
    this.busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
    this.db = new Database(file, { timeout: this.busyTimeoutMs });
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`mmap_size = ${Math.floor(opts.mmapBytes ?? 256 * 1024 * 1024)}`);
    this.db.pragma('temp_store = MEMORY');
    if (opts.createSchema !== false) this.db.transaction(() => this.createSchema()).immediate();
    const p = (sql: string) => this.db.prepare(sql);
    this.s = {
      row: p(`SELECT * FROM entries WHERE vhost = ? AND url = ? AND variant = ?`),
      // Sorted here, not by SQLite: its ORDER BY builds a temporary B-tree per query, which cost
      // ten times the search itself (about 60 of 70 us) for the one or two rows a URL has.
      rowsOfUrl: p(`SELECT * FROM entries WHERE vhost = ? AND url = ?`),
      // Positional: binding 20 named parameters from an object costs a property lookup each. A
      // key that is there already (a replacement) inserts nothing; insertRow handles that.
      insert: p(`INSERT INTO entries (${COLUMNS}) VALUES (${COLUMNS.split(', ').map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`),
      deleteId: p(`DELETE FROM entries WHERE id = ?`),
      lru: p(`SELECT id, vhost, path, size FROM entries WHERE disk = ? ORDER BY last_access LIMIT ?`),
      invalidatedSince: p(`SELECT MAX(at) FROM cache_invalidations WHERE vhost = ? AND at >= ?
        AND (url = ? OR (prefix = 1 AND substr(?, 1, length(url)) = url))`).pluck(),
      recordInvalidation: p('INSERT INTO cache_invalidations (vhost, url, prefix, at) VALUES (?, ?, 0, ?)'),
      touch: p(`UPDATE entries SET last_access = ? WHERE id = ? AND last_access < ?`),
      updateMeta: p(`UPDATE entries SET status = @status, headers = @headers, request_time = @request_time,
        cached_at = @cached_at, stale_at = @stale_at, delete_at = @delete_at, invalidated = @invalidated,
        flags = @flags, updated_at = @updated_at WHERE id = @id`),
      diskUsed: p(`SELECT used FROM disks WHERE idx = ?`).pluck(),
      addUsed: p(`UPDATE disks SET used = max(0, used + ?) WHERE idx = ?`),
      disks: p(`SELECT idx, path, quota, used, status FROM disks ORDER BY idx`),
      diskByIdx: p(`SELECT idx, path, quota, used, status FROM disks WHERE idx = ?`),
      insertDisk: p(`INSERT INTO disks (idx, path, quota, used, status) VALUES (?, ?, ?, 0, ?)`),
      setDisk: p(`UPDATE disks SET path = ?, quota = ?, status = ? WHERE idx = ?`),
      setStatus: p(`UPDATE disks SET status = ? WHERE idx = ?`),
      resetDisk: p(`UPDATE disks SET used = 0 WHERE idx = ?`),
      dropDiskRows: p(`DELETE FROM entries WHERE disk = ?`),
      dropDisksFrom: p(`DELETE FROM disks WHERE idx >= ?`),
      dropRowsFrom: p(`DELETE FROM entries WHERE disk >= ?`),
      rangeAll: p(`SELECT * FROM entries WHERE vhost = ? AND (url, variant) > (?, ?) ORDER BY url, variant LIMIT ?`),
      rangeTo: p(`SELECT * FROM entries WHERE vhost = ? AND (url, variant) > (?, ?) AND url < ? ORDER BY url, variant LIMIT ?`),
      expired: p(`SELECT id, vhost, path, size, disk, invalidated FROM entries WHERE delete_at > 0 AND delete_at < ? LIMIT ?`),
      keyRow: p(`SELECT id, path, size, disk FROM entries WHERE vhost = ? AND url = ? AND variant = ?`),
      latestInvalidation: p(`SELECT MAX(at) FROM cache_invalidations WHERE vhost = ?`).pluck(),
      setUsed: p(`UPDATE disks SET used = ? WHERE idx = ?`),
      pruneInvalidations: p(`DELETE FROM cache_invalidations WHERE at < ?`),
      insertTag: p(`INSERT OR IGNORE INTO entry_tags (vhost, tag, entry_id) VALUES (?, ?, ?)`),
      // Keyset paging on entry_id inside one (vhost, tag) of the primary key: an index range.
      tagPage: p(`SELECT e.id, e.url, e.variant, e.size, e.invalidated, e.stale_at, e.cached_at, e.flags, e.path, e.disk
        FROM entry_tags t JOIN entries e ON e.id = t.entry_id WHERE t.vhost = ? AND t.tag = ? AND t.entry_id > ? ORDER BY t.entry_id LIMIT ?`),
    };
  }

  /** The tables, and what an index made by an older version lacks (the tags column). */
  private createSchema(): void {
    this.db.exec(SCHEMA);
    const cols = this.db.prepare(`PRAGMA table_info(entries)`).all() as { name: string }[];
    if (!cols.some((c) => c.name === 'tags')) this.db.exec(`ALTER TABLE entries ADD COLUMN tags TEXT NOT NULL DEFAULT ''`);
    this.db.exec(TAG_TRIGGER);
  }

  /** One page of the light view of the rows tagged `tag`, in id order after the id `after`. */
  tagPage(vhost: string, tag: string, after: number, limit: number): LightRow[] {
    return this.s.tagPage.all(vhost, tag, after, limit) as LightRow[];
  }

  row(vhost: string, url: string, variant: string): IndexRow | undefined {
    return this.s.row.get(vhost, url, variant) as IndexRow | undefined;
  }

  /** The rows of every variant of the URL, newest first. */
  rowsOfUrl(vhost: string, url: string): IndexRow[] {
    const rows = this.s.rowsOfUrl.all(vhost, url) as IndexRow[];
    return rows.length > 1 ? rows.sort(newestFirst) : rows;
  }

  disks(): DiskRow[] {
    return this.s.disks.all() as DiskRow[];
  }

  /**
   * Aligns the disks table with the configured directories. A slot whose directory changed (or
   * that is no longer configured) loses its rows: their bodies are not where the rows point.
   */
  syncDisks(disks: { path: string; quota: number; status: DiskRow['status'] }[]): void {
    this.db.transaction(() => {
      disks.forEach((d, idx) => {
        const row = this.s.diskByIdx.get(idx) as DiskRow | undefined;
        if (row === undefined) { this.s.insertDisk.run(idx, d.path, d.quota, d.status); return; }
        if (row.path !== d.path) { this.s.dropDiskRows.run(idx); this.s.resetDisk.run(idx); }
        this.s.setDisk.run(d.path, d.quota, d.status, idx);
      });
      this.s.dropRowsFrom.run(disks.length);
      this.s.dropDisksFrom.run(disks.length);
    }).immediate();
  }

  setDiskStatus(idx: number, status: DiskRow['status']): void {
    this.s.setStatus.run(status, idx);
  }

  /**
   * Inserts (or replaces) the row of a completed body, evicting least recently used rows of its
   * disk until the disk's quota holds it. Must run inside a transaction (see `batch`).
   */
  insertRow(row: NewRow, quota: number, released: Released, batch?: InsertBatch): void {
    // An object fetched before an invalidation of its URL that commits after it (its write was
    // still in flight, possibly in another worker) lands invalidated: stale, to be revalidated,
    // never fresh old content (cache_invalidations, kept 10 minutes: see DiskStore.sweepExpired). A batch asks once
    // per vhost for its newest invalidation, and per row only when that is recent enough.
    let latest: number | null | undefined = null;
    if (batch !== undefined) {
      latest = batch.latest.get(row.vhost);
      if (latest === undefined) batch.latest.set(row.vhost, latest = this.s.latestInvalidation.get(row.vhost) as number | null);
    }
    const invalidatedAt = batch !== undefined && (latest == null || latest < row.request_time) ? null
      : this.s.invalidatedSince.get(row.vhost, row.request_time, row.url, row.url) as number | null | undefined;
    if (invalidatedAt != null && row.invalidated === 0) {
      row = { ...row, invalidated: 2, flags: flagsForInvalidated(row.flags, 2), stale_at: Math.min(row.stale_at, invalidatedAt) };
    }
    // Inserted first (a new key, the usual case, needs no lookup before); a replaced row goes and
    // the insert is repeated. Then least recently used rows of the disk make room, never the new one.
    let id = this.insertOnly(row);
    if (id === undefined) {
      const old = this.s.keyRow.get(row.vhost, row.url, row.variant) as Pick<IndexRow, 'id' | 'path' | 'size' | 'disk'> | undefined;
      if (old !== undefined) this.removeRow(old, released, batch);
      id = this.insertOnly(row);
    }
    this.addUsed(row.size, row.disk, batch);
    let over = this.used(row.disk, batch) - quota;
    for (let rounds = 0; over > 0 && rounds < 10_000; rounds++) {
      const victims = this.s.lru.all(row.disk, 64) as { id: number; vhost: string; path: string; size: number }[];
      let took = false;
      for (const v of victims) {
        if (over <= 0) break;
        if (v.id === id) continue;
        this.removeRow({ ...v, disk: row.disk }, released, batch);
        released.evicted?.push(v.vhost);
        over -= v.size;
        took = true;
      }
      if (!took) break;
    }
  }

  /** The row's id, or undefined when its key is taken. */
  private insertOnly(row: NewRow): number | undefined {
    const r = this.s.insert.run(row.vhost, row.url, row.variant, row.vary, row.status, row.headers, row.request_time, row.cached_at,
      row.stale_at, row.delete_at, row.created_at, row.updated_at, row.size, row.disk, row.fid, row.path, row.last_access,
      row.invalidated, row.flags, row.hash_key, row.tags ?? '');
    if (r.changes === 0) return undefined;
    const id = Number(r.lastInsertRowid);
    if (row.tags) for (const tag of row.tags.split(' ')) this.s.insertTag.run(row.vhost, tag, id);
    return id;
  }

  /** Writes the disk usage a batch of inserts kept in memory (see InsertBatch). */
  finishBatch(batch: InsertBatch): void {
    for (const [disk, used] of batch.used) this.s.setUsed.run(used, disk);
    batch.used.clear();
  }

  private used(disk: number, batch: InsertBatch | undefined): number {
    const known = batch?.used.get(disk);
    if (known !== undefined) return known;
    const used = this.s.diskUsed.get(disk) as number;
    batch?.used.set(disk, used);
    return used;
  }

  private addUsed(delta: number, disk: number, batch: InsertBatch | undefined): void {
    if (batch === undefined) this.s.addUsed.run(delta, disk);
    else batch.used.set(disk, Math.max(0, this.used(disk, batch) + delta));
  }

  /**
   * An unsafe method invalidated these URLs (RFC 9111 4.4): the stored variants become stale
   * (revalidated on next use) and the invalidation is logged, both in the caller's transaction,
   * so a body of one of them that commits later (insertRow) sees the log row, and the other
   * workers, which drop their memory copies when they see it, find the rows already marked.
   */
  invalidateUrls(vhost: string, urls: readonly string[], now: number): void {
    for (const url of urls) {
      this.s.recordInvalidation.run(vhost, url, now);
      for (const r of this.rowsOfUrl(vhost, url)) {
        if (r.invalidated === 0 || r.stale_at > now) {
          this.updateRow({ ...r, invalidated: r.invalidated || 2, flags: flagsForInvalidated(r.flags, r.invalidated || 2), stale_at: Math.min(r.stale_at, now), updated_at: now });
        }
      }
    }
  }

  /** The time of the newest invalidation of the URL logged at or after `since`, or null when none. */
  invalidatedSince(vhost: string, url: string, since: number): number | null {
    return (this.s.invalidatedSince.get(vhost, since, url, url) as number | null | undefined) ?? null;
  }

  /** A META update (protocol.ts): new headers / times / state of one variant; false when gone. */
  patchRow(vhost: string, url: string, variant: string, patch: MetaPatch, now: number): boolean {
    const r = this.row(vhost, url, variant);
    if (r === undefined) return false;
    const invalidated = patch.invalidated ?? r.invalidated;
    this.updateRow({
      ...r,
      status: patch.status ?? r.status,
      headers: patch.headers === undefined ? r.headers : JSON.stringify(patch.headers),
      request_time: patch.requestTime ?? r.request_time,
      cached_at: patch.cachedAt ?? r.cached_at,
      stale_at: patch.staleAt ?? r.stale_at,
      delete_at: patch.deleteAt ?? r.delete_at,
      invalidated,
      flags: flagsForInvalidated(r.flags, invalidated),
      updated_at: now,
    });
    return true;
  }

  removeRow(row: Pick<IndexRow, 'id' | 'path' | 'size' | 'disk'>, released: Released, batch?: InsertBatch): void {
    if (this.s.deleteId.run(row.id).changes > 0) {
      this.addUsed(-row.size, row.disk, batch);
      released.paths.push(row.path);
    }
  }

  updateRow(row: IndexRow): void {
    this.s.updateMeta.run(row);
  }

  /** Applies batched last-access times in one transaction (one write per second, not per hit). */
  touchMany(times: Map<number, number>): void {
    if (times.size === 0) return;
    // Recency is advisory: rather than block the event loop for the full busy timeout behind
    // another process's write, give up quickly and let the caller drop or retry the batch.
    this.db.pragma(`busy_timeout = ${TOUCH_BUSY_MS}`);
    try {
      this.db.transaction(() => {
        for (const [id, at] of times) this.s.touch.run(at, id, at);
      }).immediate();
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  /** Runs fn in one IMMEDIATE transaction: taking the write lock up front is what lets the busy
   * timeout apply (a deferred read-then-write transaction fails with SQLITE_BUSY instead). */
  batch<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** One page of the rows of a vhost whose URL starts with prefix, after (url, variant) cursor. */
  prefixPage(vhost: string, prefix: string, after: [string, string] | undefined, limit: number): IndexRow[] {
    const upper = prefixUpperBound(prefix);
    // Keyset paging on (url, variant): each page is an index range, never an OFFSET scan.
    const rows = (after === undefined
      ? this.firstPage(vhost, prefix, upper, limit)
      : upper === undefined
        ? this.s.rangeAll.all(vhost, after[0], after[1], limit)
        : this.s.rangeTo.all(vhost, after[0], after[1], upper, limit)) as IndexRow[];
    // Past the range (open-ended upper bound): stop at the first URL without the prefix.
    const cut = rows.findIndex((r) => !r.url.startsWith(prefix));
    return cut < 0 ? rows : rows.slice(0, cut);
  }

  private firstPage(vhost: string, prefix: string, upper: string | undefined, limit: number): unknown[] {
    const sql = upper === undefined
      ? this.firstAll ??= this.db.prepare(`SELECT * FROM entries WHERE vhost = ? AND url >= ? ORDER BY url, variant LIMIT ?`)
      : this.firstTo ??= this.db.prepare(`SELECT * FROM entries WHERE vhost = ? AND url >= ? AND url < ? ORDER BY url, variant LIMIT ?`);
    return upper === undefined ? sql.all(vhost, prefix, limit) : sql.all(vhost, prefix, upper, limit);
  }
  private firstAll: Database.Statement | undefined;
  private firstTo: Database.Statement | undefined;

  /**
   * One page of the light view of rows under a prefix (what operator commands choose by): no
   * headers or other wide columns, so a 100,000-row purge reads little.
   */
  lightPage(vhost: string, prefix: string, after: [string, string] | undefined, limit: number): LightRow[] {
    const upper = prefixUpperBound(prefix);
    const l = this.lightStatements();
    const rows = (after === undefined
      ? (upper === undefined ? l.first.all(vhost, prefix, limit) : l.firstTo.all(vhost, prefix, upper, limit))
      : (upper === undefined ? l.after.all(vhost, after[0], after[1], limit) : l.afterTo.all(vhost, after[0], after[1], upper, limit))) as LightRow[];
    const cut = rows.findIndex((r) => !r.url.startsWith(prefix));
    return cut < 0 ? rows : rows.slice(0, cut);
  }

  private lightStatements(): Record<'first' | 'firstTo' | 'after' | 'afterTo' | 'mark' | 'markDelete' | 'tombstone', Database.Statement> {
    const cols = 'id, url, variant, size, invalidated, stale_at, cached_at, flags, path, disk';
    return this.light ??= {
      first: this.db.prepare(`SELECT ${cols} FROM entries WHERE vhost = ? AND url >= ? ORDER BY url, variant LIMIT ?`),
      firstTo: this.db.prepare(`SELECT ${cols} FROM entries WHERE vhost = ? AND url >= ? AND url < ? ORDER BY url, variant LIMIT ?`),
      after: this.db.prepare(`SELECT ${cols} FROM entries WHERE vhost = ? AND (url, variant) > (?, ?) ORDER BY url, variant LIMIT ?`),
      afterTo: this.db.prepare(`SELECT ${cols} FROM entries WHERE vhost = ? AND (url, variant) > (?, ?) AND url < ? ORDER BY url, variant LIMIT ?`),
      mark: this.db.prepare('UPDATE entries SET invalidated = ?, flags = ?, stale_at = ?, updated_at = ? WHERE id = ?'),
      // delete_at moves with an extended expiry (PrefixMark.deleteAt); the right-hand sides see
      // the row's old values, so the old stale window is kept after the new deletion floor. A
      // statement of its own: delete_at is indexed, and purge/expire need not touch that index.
      markDelete: this.db.prepare(`UPDATE entries SET invalidated = ?, flags = ?, stale_at = ?, updated_at = ?,
        delete_at = CASE WHEN delete_at = 0 THEN 0 ELSE max(delete_at, ? + max(0, delete_at - stale_at)) END WHERE id = ?`),
      tombstone: this.db.prepare(`UPDATE entries SET invalidated = ?, flags = ?, size = 0, stale_at = ?, updated_at = ?,
        delete_at = CASE WHEN delete_at = 0 OR delete_at > ? THEN ? ELSE delete_at END WHERE id = ?`),
    };
  }
  private light: Record<'first' | 'firstTo' | 'after' | 'afterTo' | 'mark' | 'markDelete' | 'tombstone', Database.Statement> | undefined;

  /** Sets only the invalidation state of a row (the light counterpart of updateRow). */
  markLight(r: LightRow, mark: PrefixMark, now: number): void {
    const invalidated = mark.invalidated ?? r.invalidated;
    const flags = flagsForInvalidated(r.flags, invalidated);
    const l = this.lightStatements();
    if (mark.deleteAt === undefined) l.mark.run(invalidated, flags, mark.staleAt ?? r.stale_at, now, r.id);
    else l.markDelete.run(invalidated, flags, mark.staleAt ?? r.stale_at, now, mark.deleteAt, r.id);
  }

  /**
   * Hardpurge: the body goes (its bytes leave the disk's quota), the row stays marked for at most
   * a day, never served, so fileinfo can show HardPurge Y until a new fetch replaces it.
   */
  tombstoneRow(r: LightRow, released: Released, now: number): void {
    const until = now + 86_400_000;
    this.lightStatements().tombstone.run(INVALIDATED_HARDPURGED, flagsForInvalidated(r.flags, INVALIDATED_HARDPURGED), now, now, until, until, r.id);
    this.s.addUsed.run(-r.size, r.disk);
    released.paths.push(r.path);
  }

  /** Marks a page of rows (invalidation by command); flags follow the invalidated state. */
  markRows(rows: IndexRow[], mark: PrefixMark, now: number): void {
    for (const r of rows) {
      const invalidated = mark.invalidated ?? r.invalidated;
      const flags = flagsForInvalidated(r.flags, invalidated);
      const deleteAt = mark.deleteAt === undefined ? r.delete_at : deleteAtAfter({ staleAt: r.stale_at, deleteAt: r.delete_at }, mark.deleteAt);
      this.updateRow({ ...r, invalidated, flags, stale_at: mark.staleAt ?? r.stale_at, delete_at: deleteAt, updated_at: now });
    }
  }

  expiredRows(now: number, limit: number): Pick<IndexRow, 'id' | 'vhost' | 'path' | 'size' | 'disk' | 'invalidated'>[] {
    return this.s.expired.all(now, limit) as Pick<IndexRow, 'id' | 'vhost' | 'path' | 'size' | 'disk' | 'invalidated'>[];
  }

  /** Invalidations older than any fetch still in flight can be forgotten (see insertRow). */
  pruneInvalidations(before: number): void {
    this.s.pruneInvalidations.run(before);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function newestFirst(a: IndexRow, b: IndexRow): number {
  return b.cached_at - a.cached_at;
}
