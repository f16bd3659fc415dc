// What the disk cache holds per virtual host and disk, read from the shared SQLite index on a
// read-only connection (VirtualHost FileTotal, WaitingFiles2Delete and the Disk group). A full
// scan of the index: it runs in a thread of its own (workers/index-census-thread.ts), every few
// seconds, never on an event loop that serves anything.
import Database from 'better-sqlite3';

export interface CensusRow {
  vhost: string;
  disk: number;
  /** Objects (rows) and their body bytes. */
  files: number;
  bytes: number;
  /** Rows past their delete time: the sweep removes them and their files. */
  waitingDelete: number;
  /** Rows marked by purge (restorable), by expire, and hard-purge tombstones. */
  purged: number;
  expired: number;
  hardPurged: number;
}

export class IndexCensus {
  private readonly db: Database.Database;
  private readonly query: Database.Statement;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true, timeout: 1000 });
    this.query = this.db.prepare(`SELECT vhost, disk, COUNT(*) AS files, COALESCE(SUM(size), 0) AS bytes,
      COALESCE(SUM(delete_at > 0 AND delete_at < @now), 0) AS waitingDelete,
      COALESCE(SUM(invalidated = 1), 0) AS purged, COALESCE(SUM(invalidated = 2), 0) AS expired,
      COALESCE(SUM(invalidated = 3), 0) AS hardPurged
      FROM entries GROUP BY vhost, disk`);
  }

  take(now: number): CensusRow[] {
    return this.query.all({ now }) as CensusRow[];
  }

  close(): void {
    this.db.close();
  }
}
