// Invalidations every worker must apply to its own memory tier: an unsafe method that succeeded
// in one worker, or a purge from the management API in the primary. They are rows of a small
// table in the shared index database. A worker looks at them only when SQLite's data_version
// says another connection committed something, so the per-request cost is one pragma read and
// nothing crosses IPC.
import Database from 'better-sqlite3';

export interface Invalidation {
  vhost: string;
  /** Exact URL, or a prefix when `prefix` is true (directory and wildcard purges). */
  url: string;
  prefix: boolean;
}

/** Rows older than this are pruned: every live worker has applied them long before. */
const KEEP_MS = 10 * 60_000;

export class InvalidationLog {
  private readonly db: Database.Database;
  private readonly dataVersion: Database.Statement;
  private readonly since: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly prune: Database.Statement;
  private lastVersion = -1;
  private lastSeq: number;

  constructor(indexPath: string) {
    this.db = new Database(indexPath, { timeout: 5000 });
    // The disk store has put the file in WAL mode already; asking again would need a lock that
    // the busy timeout does not cover when several workers start at once.
    this.db.exec(`CREATE TABLE IF NOT EXISTS cache_invalidations (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, vhost TEXT NOT NULL, url TEXT NOT NULL,
      prefix INTEGER NOT NULL, at INTEGER NOT NULL)`);
    this.dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.since = this.db.prepare('SELECT seq, vhost, url, prefix FROM cache_invalidations WHERE seq > ? ORDER BY seq');
    this.insert = this.db.prepare('INSERT INTO cache_invalidations (vhost, url, prefix, at) VALUES (?, ?, ?, ?)');
    this.prune = this.db.prepare('DELETE FROM cache_invalidations WHERE at < ?');
    // Start after what is already there: a new worker's memory is empty anyway.
    this.lastSeq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) FROM cache_invalidations').pluck().get() as number);
  }

  /** Records invalidations for the other workers (the caller applies them to its own memory). */
  record(items: readonly Invalidation[]): void {
    if (items.length === 0) return;
    const now = Date.now();
    this.db.transaction(() => {
      for (const i of items) this.insert.run(i.vhost, i.url, i.prefix ? 1 : 0, now);
    })();
    // Our own rows come back through poll() too; dropping a memory copy twice is harmless.
  }

  /** Calls `apply` for every invalidation another connection recorded since the last call. */
  poll(apply: (i: Invalidation) => void): void {
    const v = this.dataVersion.get() as number;
    if (v === this.lastVersion) return;
    this.lastVersion = v;
    for (const row of this.since.iterate(this.lastSeq) as IterableIterator<{ seq: number; vhost: string; url: string; prefix: number }>) {
      this.lastSeq = row.seq;
      apply({ vhost: row.vhost, url: row.url, prefix: row.prefix === 1 });
    }
  }

  pruneOld(): void {
    this.prune.run(Date.now() - KEEP_MS);
  }

  close(): void {
    this.db.close();
  }
}
