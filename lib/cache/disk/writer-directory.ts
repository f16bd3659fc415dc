// The writer thread's side of the directory (directory.ts): it reads the index so the request
// path does not have to. It builds a filter of every URL with a row (in slices, between which
// the thread goes on writing), hands it to the main thread, then adds the rows committed since,
// by any process, every DIRECTORY_POLL_MS; when the filter holds more URLs than it was sized
// for, it builds a larger one the same way and hands that over. Rows get increasing ids
// (INTEGER PRIMARY KEY), so "committed since" is "id above the last one read".
//
// Under load the look happens inside each of the thread's own commits instead (CommitWatch,
// writer-index.ts), on the writer's connection while it holds the write lock: the rows other
// processes committed since are read before this commit's rows go in, and this commit's rows,
// whose keys the thread has in hand (and the main thread added when it opened them), are never
// read back. The timer then only looks when the thread commits nothing for a poll period: one
// wake-up fewer per period, and no SQLite read and hashing of every row the thread wrote (a
// twentieth of the thread's time per miss).
import Database from 'better-sqlite3';
import { DIRECTORY_POLL_MS, UrlDirectory } from './directory.js';
import type { CommitWatch } from './writer-index.js';

/** Rows read per slice of a build (a few ms of the thread each). */
const SLICE_ROWS = 20_000;
/**
 * The rows after an id, a slice at most. The limit is in the text: bound as a parameter, it made
 * every look cost about 8 us even when it found nothing (3 us so).
 */
const SINCE_SQL = `SELECT id, vhost, url FROM entries WHERE id > ? ORDER BY id LIMIT ${SLICE_ROWS}`;

export class DirectoryFeed implements CommitWatch {
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
  /** The look of `since`, prepared on the writer's connection (CommitWatch), and its max id. */
  private txSince: Database.Statement | undefined;
  private txMax: Database.Statement | undefined;
  /** The largest id once the commit in progress is in (all ids above lastId up to it are its own). */
  private txMaxId = 0;

  constructor(indexPath: string, busyTimeoutMs: number, private readonly handOver: (buffer: SharedArrayBuffer) => void) {
    this.db = new Database(indexPath, { readonly: true, timeout: busyTimeoutMs });
    this.since = this.db.prepare(SINCE_SQL).raw();
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
    const rows = this.since.all(b.at) as [number, string, string][];
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
    this.read(this.since);
  }

  private read(since: Database.Statement): void {
    for (;;) {
      const rows = since.all(this.lastId) as [number, string, string][];
      for (const [id, vhost, url] of rows) {
        this.current?.add(vhost, url);
        this.building?.dir.add(vhost, url);
        this.lastId = id;
      }
      this.held += rows.length;
      if (rows.length < SLICE_ROWS) break;
    }
    this.rebuildWhenFull();
  }

  private rebuildWhenFull(): void {
    if (this.building === undefined && this.current !== undefined && this.held > this.current.capacity) this.startBuild();
  }

  /** CommitWatch: inside the commit, before its rows, the rows of other processes since the last look. */
  before(db: Database.Database): void {
    if (this.closed) return;
    this.txSince ??= db.prepare(SINCE_SQL).raw();
    this.read(this.txSince);
  }

  /** CommitWatch: inside the commit, after its rows (the lock is still held: nobody else inserted). */
  after(db: Database.Database): void {
    if (this.closed) return;
    this.txMax ??= db.prepare('SELECT coalesce(max(id), 0) FROM entries').pluck();
    this.txMaxId = this.txMax.get() as number;
  }

  /** CommitWatch: the commit is in; its rows are known without reading them back. */
  committed(keys: readonly { vhost: string; url: string }[]): void {
    if (this.closed) return;
    if (this.txMaxId > this.lastId) this.lastId = this.txMaxId;
    // The filter in use has them (the main thread adds a URL when its write opens); a filter
    // being built needs them, since its scan stops at the rows there when it began.
    if (this.building !== undefined) for (const k of keys) this.building.dir.add(k.vhost, k.url);
    this.held += keys.length;
    // Looked just now: the timer's look waits a whole period again.
    this.timer.refresh();
    this.rebuildWhenFull();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.db.close();
  }
}
