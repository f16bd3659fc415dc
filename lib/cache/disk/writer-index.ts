// The writer thread's side of the shared index (see writer-core.ts): rows of completed bodies,
// committed in batches, and the index changes of the request path (META ops).
import type Database from 'better-sqlite3';
import { IndexDb, type InsertBatch, type Released } from '../index-db.js';
import type { MetaOp, WriterInit } from './protocol.js';
import { rowFor, unlinkQuiet, type Obj } from './writer-io.js';
import { RowFreshener } from './writer-freshen.js';

/** An object whose file is in place (path), or a too-large one whose old variant goes (''). */
export interface Ready { obj: Obj; path: string }

/**
 * Hears each commit of rows (the directory feed, writer-directory.ts): `before` and `after` run
 * inside its transaction, around its rows, while it holds the write lock; `committed` once it is
 * in, with the keys of the rows it wrote.
 */
export interface CommitWatch {
  before(db: Database.Database): void;
  after(db: Database.Database): void;
  committed(keys: readonly { vhost: string; url: string }[]): void;
}

export class IndexWriter {
  readonly index: IndexDb;
  private readonly putTx: (it: Ready, now: number, released: Released) => void;

  /** quotaOf: the byte quota of a disk (eviction makes room for a new row within it). */
  constructor(init: WriterInit, private readonly quotaOf: (disk: number) => number) {
    // The store created the tables before starting this thread.
    this.index = new IndexDb(init.indexPath, { busyTimeoutMs: init.busyTimeoutMs, mmapBytes: init.mmapBytes, createSchema: false });
    // Created once: inside the batch transaction each call is a savepoint (see commit).
    this.putTx = this.index.db.transaction((it: Ready, now: number, released: Released) => this.put(it, now, released));
  }

  /**
   * Commits the rows of the items in one IMMEDIATE transaction. Returns undefined when all of
   * them are in, else each item's error (undefined for those that are in); a failed item's file
   * is removed, and so are the files of replaced and evicted rows once they are unreferenced.
   */
  /** Hosts of the rows evicted since the last takeEvicted (one entry per row). */
  private evicted: string[] = [];

  takeEvicted(): string[] {
    const e = this.evicted;
    this.evicted = [];
    return e;
  }

  watch: CommitWatch | undefined;

  commit(items: readonly Ready[]): (Error | undefined)[] | undefined {
    let released: Released = { paths: [], evicted: [] };
    const now = Date.now();
    let results: (Error | undefined)[] | undefined;
    const watch = this.watch;
    try {
      // Usually every row goes in: all in one go, the disk usage written once (InsertBatch).
      this.index.batch(() => {
        watch?.before(this.index.db);
        const batch: InsertBatch = { used: new Map(), latest: new Map() };
        for (const it of items) this.put(it, now, released, batch);
        this.index.finishBatch(batch);
        watch?.after(this.index.db);
      });
    } catch {
      // Something failed and the transaction is undone: again, each row in a savepoint of its
      // own, so one bad row does not fail the others.
      released = { paths: [], evicted: [] };
      const each: (Error | undefined)[] = [];
      try {
        this.index.batch(() => {
          watch?.before(this.index.db);
          for (const it of items) {
            try {
              this.putTx(it, now, released);
              each.push(undefined);
            } catch (err) {
              each.push(err as Error);
            }
          }
          watch?.after(this.index.db);
        });
        results = each;
      } catch (err) {
        results = items.map(() => err as Error);
        released.paths = [];
        released.evicted = [];
      }
    }
    if (results !== undefined) items.forEach((it, i) => { if (results![i] !== undefined && it.path !== '') unlinkQuiet(it.path); });
    if (watch !== undefined && (results === undefined || results.some((e) => e === undefined))) {
      watch.committed(items.flatMap((it, i) => (it.path !== '' && results?.[i] === undefined ? [it.obj.meta] : [])));
    }
    for (const p of released.paths) unlinkQuiet(p);
    for (const v of released.evicted!) this.evicted.push(v);
    return results;
  }

  private get freshener(): RowFreshener {
    return this.rowFreshener ??= new RowFreshener(this.index);
  }
  private rowFreshener: RowFreshener | undefined;

  /** META ops in one transaction: flat [id, value, ...] results, or the error of all of them. */
  metas(metas: readonly [number, MetaOp][]): number[] {
    const vals: number[] = [];
    this.index.batch(() => {
      for (const [id, op] of metas) {
        if (op.t === 'update') vals.push(id, this.index.patchRow(op.vhost, op.url, op.variant, op.patch, op.now) ? 1 : 0);
        else if (op.t === 'freshen') vals.push(id, op.items.reduce((n, it) => n + this.freshener.freshen(it, op.now), 0));
        else { this.index.invalidateUrls(op.vhost, op.urls, op.now); vals.push(id, 0); }
      }
    });
    return vals;
  }

  /** The row of a stored body, or for a too-large one ('' path) the removal of what it replaces. */
  private put(it: Ready, now: number, released: Released, batch?: InsertBatch): void {
    if (it.path !== '') { this.index.insertRow(rowFor(it.obj, it.path, now), this.quotaOf(it.obj.disk), released, batch); return; }
    const m = it.obj.meta;
    const old = this.index.row(m.vhost, m.url, m.variant);
    if (old !== undefined) this.index.removeRow(old, released, batch);
  }
}
