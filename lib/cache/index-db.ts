// The SQLite index of the disk cache, shared by every worker process of the node (WAL: readers
// never wait for the writer; busy timeout: writers of several processes queue instead of
// failing). Every statement is prepared once; the request path uses only keyed lookups.
import Database from 'better-sqlite3';
import type { MetaPatch } from './disk/protocol.js';
import { deleteAtAfter, flagsForInvalidated, INVALIDATED_HARDPURGED, prefixUpperBound, type PrefixMark } from './prefix.js';

/** The columns operator commands need to choose, count, mark or delete a row. */
export interface LightRow { id: number; url: string; variant: string; size: number; invalidated: number; stale_at: number; cached_at: number; flags: number; path: string; disk: number }

export interface IndexRow {
  id: number;
  vhost: string;
  url: string;
  variant: string;
  /** JSON array of the Vary header names. */
  vary: string;
  status: number;
  /** JSON object of the stored headers. */
  headers: string;
  request_time: number;
  cached_at: number;
  stale_at: number;
  delete_at: number;
  created_at: number;
  /** Changes on every metadata update (a 304 refresh), for the UpdateTime of fileinfo. */
  updated_at: number;
  size: number;
  disk: number;
  fid: string;
  path: string;
  last_access: number;
  invalidated: number;
  /** FLAG_* bits of prefix.ts. */
  flags: number;
  hash_key: string;
}

export type NewRow = Omit<IndexRow, 'id'>;

export interface DiskRow {
  idx: number;
  path: string;
  quota: number;
  used: number;
  status: 'Normal' | 'Invalid';
}

/** Files that are no longer referenced once a transaction commits, to unlink afterwards. */
export interface Released {
  paths: string[];
}

/**
 * Inserts of one transaction (the writer thread's batch): the disk usage is read once and
 * written once (finishBatch) instead of twice per row, and each vhost's newest invalidation is
 * looked up once. Only valid while the transaction holds the write lock.
 */
export interface InsertBatch {
  used: Map<number, number>;
  latest: Map<string, number | null>;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY,
  vhost TEXT NOT NULL,
  url TEXT NOT NULL,
  variant TEXT NOT NULL,
  vary TEXT NOT NULL,
  status INTEGER NOT NULL,
  headers TEXT NOT NULL,
  request_time INTEGER NOT NULL,
  cached_at INTEGER NOT NULL,
  stale_at INTEGER NOT NULL,
  delete_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  size INTEGER NOT NULL,
  disk INTEGER NOT NULL,
  fid TEXT NOT NULL,
  path TEXT NOT NULL,
  last_access INTEGER NOT NULL,
  invalidated INTEGER NOT NULL DEFAULT 0,
  flags INTEGER NOT NULL DEFAULT 0,
  hash_key TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS entries_key ON entries (vhost, url, variant);
CREATE INDEX IF NOT EXISTS entries_lru ON entries (disk, last_access);
CREATE INDEX IF NOT EXISTS entries_delete_at ON entries (delete_at);
DROP INDEX IF EXISTS entries_fid;
CREATE TABLE IF NOT EXISTS disks (
  idx INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  quota INTEGER NOT NULL,
  used INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'Normal'
);
CREATE TABLE IF NOT EXISTS cache_invalidations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, vhost TEXT NOT NULL, url TEXT NOT NULL,
  prefix INTEGER NOT NULL, at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS cache_invalidations_at ON cache_invalidations (vhost, at);
`;

const TOUCH_BUSY_MS = 250;

const COLUMNS = 'vhost, url, variant, vary, status, headers, request_time, cached_at, stale_at, delete_at, created_at, updated_at, size, disk, fid, path, last_access, invalidated, flags, hash_key';

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
    if (opts.createSchema !== false) this.db.transaction(() => this.db.exec(SCHEMA)).immediate();
    const p = (sql: string) => this.db.prepare(sql);
    this.s = {
      row: p(`SELECT * FROM entries WHERE vhost = ? AND url = ? AND variant = ?`),
      rowsOfUrl: p(`SELECT * FROM entries WHERE vhost = ? AND url = ? ORDER BY cached_at DESC`),
      insert: p(`INSERT INTO entries (${COLUMNS}) VALUES (${COLUMNS.split(', ').map((c) => '@' + c).join(', ')})`),
      deleteId: p(`DELETE FROM entries WHERE id = ?`),
      lru: p(`SELECT id, path, size FROM entries WHERE disk = ? ORDER BY last_access LIMIT ?`),
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
      expired: p(`SELECT id, path, size, disk FROM entries WHERE delete_at > 0 AND delete_at < ? LIMIT ?`),
      keyRow: p(`SELECT id, path, size, disk FROM entries WHERE vhost = ? AND url = ? AND variant = ?`),
      latestInvalidation: p(`SELECT MAX(at) FROM cache_invalidations WHERE vhost = ?`).pluck(),
      setUsed: p(`UPDATE disks SET used = ? WHERE idx = ?`),
    };
  }

  row(vhost: string, url: string, variant: string): IndexRow | undefined {
    return this.s.row.get(vhost, url, variant) as IndexRow | undefined;
  }

  rowsOfUrl(vhost: string, url: string): IndexRow[] {
    return this.s.rowsOfUrl.all(vhost, url) as IndexRow[];
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
    // never fresh old content (cache_invalidations, see invalidation-log.ts). A batch asks once
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
    const old = this.s.keyRow.get(row.vhost, row.url, row.variant) as Pick<IndexRow, 'id' | 'path' | 'size' | 'disk'> | undefined;
    if (old !== undefined) this.removeRow(old, released, batch);
    let over = this.used(row.disk, batch) + row.size - quota;
    for (let rounds = 0; over > 0 && rounds < 10_000; rounds++) {
      const victims = this.s.lru.all(row.disk, 64) as { id: number; path: string; size: number }[];
      if (victims.length === 0) break;
      for (const v of victims) {
        if (over <= 0) break;
        this.removeRow({ ...v, disk: row.disk }, released, batch);
        over -= v.size;
      }
    }
    this.s.insert.run(row);
    this.addUsed(row.size, row.disk, batch);
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

  expiredRows(now: number, limit: number): Pick<IndexRow, 'id' | 'path' | 'size' | 'disk'>[] {
    return this.s.expired.all(now, limit) as Pick<IndexRow, 'id' | 'path' | 'size' | 'disk'>[];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
