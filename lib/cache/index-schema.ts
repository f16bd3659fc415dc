// Schema and row shapes of the disk cache's SQLite index (index-db.ts has the statements).

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
  /** The cache tags, space-separated ('' when none); entry_tags is their index. */
  tags: string;
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
  /** The host of each row evicted to make room (CacheFileEvent Erase), when the caller asks. */
  evicted?: string[];
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

export const SCHEMA = `
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
  hash_key TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS entries_key ON entries (vhost, url, variant);
CREATE INDEX IF NOT EXISTS entries_lru ON entries (disk, last_access);
CREATE INDEX IF NOT EXISTS entries_delete_at ON entries (delete_at);
DROP INDEX IF EXISTS entries_fid;
CREATE TABLE IF NOT EXISTS entry_tags (
  vhost TEXT NOT NULL, tag TEXT NOT NULL, entry_id INTEGER NOT NULL,
  PRIMARY KEY (vhost, tag, entry_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entry_tags_entry ON entry_tags (entry_id);
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

/**
 * After SCHEMA (an index made before tags gains their column first): a row's tags go with it,
 * whichever statement removes it (replacement, eviction, sweep, a disk dropped).
 */
export const TAG_TRIGGER = `
CREATE TRIGGER IF NOT EXISTS entries_tags_gone AFTER DELETE ON entries WHEN old.tags <> ''
BEGIN DELETE FROM entry_tags WHERE entry_id = old.id; END;
`;

export const COLUMNS = 'vhost, url, variant, vary, status, headers, request_time, cached_at, stale_at, delete_at, created_at, updated_at, size, disk, fid, path, last_access, invalidated, flags, hash_key, tags';
