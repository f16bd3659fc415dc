// The writer thread's side of the directory (directory.ts): it reads the index so the request
// path does not have to. It builds a filter of every URL with a row (in slices, between which
// the thread goes on writing), hands it to the main thread, then adds the rows committed since,
// by any process, every DIRECTORY_POLL_MS; when the filter holds more URLs than it was sized
// for, it builds a larger one the same way and hands that over. Rows get increasing ids
// (INTEGER PRIMARY KEY), so "committed since" is "id above the last one read".
import Database from 'better-sqlite3';
import { DIRECTORY_POLL_MS, UrlDirectory } from './directory.js';

/** Rows read per slice of a build (a few ms of the thread each). */
const SLICE_ROWS = 20_000;

export class DirectoryFeed {
  private readonly db: Database.Database;
  private readonly since: Database.Statement;
  private readonly count: Database.Statement;
  /** The filter the main thread reads (undefined until the first build is handed over). */
  private current: UrlDirectory | undefined;
  /** A filter being built, with the last id its scan will read. */
  private building: { dir: UrlDirectory; upTo: number; at: number } | undefined;
  private lastId = 0;
  /** URLs added to `current` since it was built (with those it was built with). */
  private held = 0;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(indexPath: string, busyTimeoutMs: number, private readonly handOver: (buffer: SharedArrayBuffer) => void) {
    this.db = new Database(indexPath, { readonly: true, timeout: busyTimeoutMs });
    this.since = this.db.prepare('SELECT id, vhost, url FROM entries WHERE id > ? ORDER BY id LIMIT ?').raw();
    this.count = this.db.prepare('SELECT count(*), coalesce(max(id), 0) FROM entries').raw();
    this.timer = setInterval(() => this.poll(), DIRECTORY_POLL_MS);
    this.startBuild();
  }

  private startBuild(): void {
    const [rows, maxId] = this.count.get() as [number, number];
    // Sized for twice what is there, so that a growing cache is not rebuilt at once.
    this.building = { dir: UrlDirectory.create(Math.max(rows, 1) * 2), upTo: maxId, at: 0 };
    // The first build reads every row itself; a rebuild leaves the polls reading into both filters.
    if (this.current === undefined) this.lastId = maxId;
    this.held = rows;
    setImmediate(() => this.buildSlice());
  }

  private buildSlice(): void {
    const b = this.building;
    if (this.closed || b === undefined) return;
    const rows = this.since.all(b.at, SLICE_ROWS) as [number, string, string][];
    for (const [id, vhost, url] of rows) {
      if (id > b.upTo) break;
      b.dir.add(vhost, url);
      b.at = id;
    }
    if (rows.length === SLICE_ROWS && b.at < b.upTo) { setImmediate(() => this.buildSlice()); return; }
    this.current = b.dir;
    this.building = undefined;
    // Caught up before the hand-over: rows committed meanwhile are in the filter the main
    // thread gets (those it is still writing, it adds itself: DiskStore.useDirectory).
    this.poll();
    this.handOver(b.dir.buffer);
  }

  /** Rows committed since the last look go into the filter in use and the one being built. */
  private poll(): void {
    if (this.closed) return;
    for (;;) {
      const rows = this.since.all(this.lastId, SLICE_ROWS) as [number, string, string][];
      for (const [id, vhost, url] of rows) {
        this.current?.add(vhost, url);
        this.building?.dir.add(vhost, url);
        this.lastId = id;
      }
      this.held += rows.length;
      if (rows.length < SLICE_ROWS) break;
    }
    if (this.building === undefined && this.current !== undefined && this.held > this.current.capacity) this.startBuild();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.db.close();
  }
}
