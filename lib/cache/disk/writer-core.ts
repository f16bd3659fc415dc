// The disk store's write path, run in its writer thread (workers/disk-writer-thread.ts), off
// the request path: that is why the file calls here are synchronous (one syscall each instead
// of a FileHandle and a promise round trip per step).
//
// Crash-safety order, per object: the body in its file first (a streaming body in a temp file,
// renamed to its final name at its end; a body that arrived whole written straight under its
// final name), and only then the index row, committed in a transaction (writer-index.ts). A
// process killed at any point leaves at most a temp file (cleaned at the next open) or a final
// file no row names, never a row pointing at a partial body. Which disk a file goes to, and the
// disks' health, are writer-disks.ts's.
import { closeSync, mkdirSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { fidSource } from '../disk-files.js';
import { fromWire, Op, STREAM_BYTES, WIRE_META_FIELDS, type MetaOp, type OpsMessage, type Reply, type WireMeta, type WriterInit } from './protocol.js';
import { IndexWriter, type CommitWatch, type Ready } from './writer-index.js';
import { copyOfShared, keyHash, unlinkQuiet, writeAll, type Obj } from './writer-io.js';
import { WriterDisks } from './writer-disks.js';

/** Body bytes a streaming object gathers before they are written to its temp file. */
const FLUSH_BYTES = 256 * 1024;
/** Completed rows that are committed at once instead of waiting for the batch window. */
const COMMIT_NOW_ROWS = 512;
/**
 * Under load the rows are committed when a message comes in and the oldest of them has waited
 * commitDelayMs: the thread is awake then anyway. The timer, which would wake it once more per
 * commit, is only for when no message comes: it fires this much later than the window, after the
 * main thread's next batch would have come (writer-channel.ts POST_DELAY_MS).
 */
const COMMIT_TIMER_SLACK_MS = 3;

type Send = (reply: Reply) => void;

export class WriterCore {
  private readonly rows: IndexWriter;
  /** The disks, their status and errors, and where an object's file goes (writer-disks.ts). */
  private readonly disks: WriterDisks;
  private readonly objs = new Map<number, Obj>();
  private ready: Ready[] = [];
  private readonly nextFid = fidSource();
  private ok: number[] = [];
  private vals: number[] = [];
  private err: [number, string, string][] = [];
  private freed = 0;
  /** [id, bytes] pairs of streams still open whose bytes were written or dropped. */
  private acks: number[] = [];
  /** Gathered bytes of all objects not yet written; capped so streams cannot stall the bound. */
  private held = 0;
  private readonly holdLimit: number;
  /** The fallback commit timer (made once, re-armed with refresh), whether it is armed, and since when. */
  private commitTimer: NodeJS.Timeout | undefined;
  private commitArmed = false;
  private readySince = 0;
  private replyScheduled = false;
  private readonly refreshTimer: NodeJS.Timeout;
  private readonly reportEvery: number;
  private closed = false;
  /** The ring of the body bytes (protocol.ts), and how far it is done with / has said so. */
  private readonly ring: SharedArrayBuffer;
  private ringDone = 0;
  private ringReported = 0;

  /** `report` hears disk errors (3001) and disks taken out of service (3002), for the error log. */
  constructor(private readonly init: WriterInit, private readonly send: Send, report?: (code: '3001' | '3002', detail: string) => void) {
    this.disks = new WriterDisks(init, () => this.rows.index, report);
    this.rows = new IndexWriter(init, (disk) => this.disks.quota(disk));
    this.ring = init.ring;
    this.reportEvery = Math.max(64 * 1024, Math.min(1 << 20, Math.floor(init.maxInFlightBytes / 8)));
    this.holdLimit = Math.max(FLUSH_BYTES, Math.floor(init.maxInFlightBytes / 4));
    this.refreshTimer = setInterval(() => this.disks.refresh(), init.refreshMs).unref();
  }

  /** Who hears of each commit of rows (the directory feed). */
  watchCommits(watch: CommitWatch): void {
    this.rows.watch = watch;
  }

  receive(msg: OpsMessage): void {
    if (this.closed) return;
    const { ops, bufs, ring } = msg;
    const touched = new Set<Obj>();
    const metas: [number, MetaOp][] = [];
    let closing = false;
    for (let i = 0; i < ops.length;) {
      const code = ops[i] as number;
      const id = ops[i + 1] as number;
      if (code === Op.DATA) {
        const len = ops[i + 4] as number;
        const o = this.objs.get(id);
        if (o === undefined) this.freed += len; // settled already (failed or aborted)
        else if (o.tooBig) { this.freed += len; this.acks.push(id, len); } else {
          const b = ops[i + 2] as number;
          this.data(o, Buffer.from(b < 0 ? this.ring : bufs[b]!, ops[i + 3] as number, len));
          touched.add(o);
        }
        i += 5;
      } else if (code === Op.OPEN) {
        this.open(id, fromWire(ops, i + 2));
        i += 2 + WIRE_META_FIELDS;
      } else if (code === Op.END || code === Op.BIG) {
        const o = this.objs.get(id);
        if (o !== undefined) {
          if (code === Op.END) o.ended = true; else this.markTooBig(o);
          touched.add(o);
        }
        i += 2;
      } else if (code === Op.ABORT) {
        this.abort(id);
        i += 2;
      } else if (code === Op.CLOSE) {
        closing = true;
        i += 1;
      } else if (code === Op.META) {
        metas.push([id, ops[i + 2] as MetaOp]);
        i += 3;
      } else {
        throw new Error(`disk writer: unknown op ${String(code)}`);
      }
    }
    for (const o of touched) if (this.objs.get(o.id) === o) this.advance(o);
    // Many slow streams each below FLUSH_BYTES could otherwise hold the whole in-flight bound
    // here while their writers wait for it to drain.
    if (this.held > this.holdLimit) for (const o of [...this.objs.values()]) if (o.pendingBytes > 0) this.advance(o, true);
    // From here on nothing reads the ring below this message's end.
    for (const o of touched) if (o.pending.length > 0 && this.objs.get(o.id) === o) this.leaveRing(o);
    this.ringDone = ring;
    if (metas.length > 0) this.runMetas(metas);
    if (closing) { this.close(); return; }
    if (this.ready.length > 0) {
      if (this.ready.length >= COMMIT_NOW_ROWS || this.commitArmed && performance.now() - this.readySince >= this.init.commitDelayMs) this.commit();
      else this.armCommit();
    }
    // A stream may be waiting for its acknowledgements (the per-stream bound), or the main
    // thread for ring space: answer now.
    if (this.freed >= this.reportEvery || this.acks.length > 0 || this.ringDone - this.ringReported >= this.ring.byteLength / 4) this.reply();
    else if (this.ok.length > 0 || this.err.length > 0) this.scheduleReply();
  }

  private open(id: number, meta: WireMeta): void {
    const hash = keyHash(meta);
    const o: Obj = {
      id, meta, hash, fid: this.nextFid(), candidates: this.disks.pick(hash), disk: -1, tmp: '', fd: -1,
      pending: [], pendingBytes: 0, bytes: 0, tooBig: false, ended: false,
    };
    this.objs.set(id, o);
    if (o.candidates.length === 0) { this.fail(o, Object.assign(new Error('no usable cache disk'), { code: 'ENOCACHEDISK' })); return; }
    // A body announced as large streams to disk anyway: create its temp file now, while its
    // bytes are still arriving (the main thread posts such an OPEN at once).
    if (meta.size >= STREAM_BYTES && meta.size <= this.disks.maxObjectBytes(o.candidates[0]!)) {
      try { this.disks.createTemp(o); } catch (err) { this.fail(o, err); }
    }
  }

  private data(o: Obj, buf: Buffer): void {
    o.bytes += buf.length;
    o.pending.push(buf);
    o.pendingBytes += buf.length;
    this.held += buf.length;
    if (o.bytes > this.disks.maxObjectBytes(o.disk >= 0 ? o.disk : o.candidates[0]!)) this.markTooBig(o);
  }

  /** Not kept: stop spending disk on it; at its end the variant it would replace is dropped. */
  private markTooBig(o: Obj): void {
    o.tooBig = true;
    this.discard(o);
  }

  /** Writes what an object has gathered, and completes it when its body has ended. */
  private advance(o: Obj, force = false): void {
    try {
      if (o.tooBig) {
        if (o.ended) { this.objs.delete(o.id); this.ready.push({ obj: o, path: '' }); }
        return;
      }
      if (!o.ended) {
        if (o.pendingBytes >= FLUSH_BYTES || force) this.writePending(o);
        return;
      }
      if (o.fd < 0 && o.disk < 0) {
        const whole = this.disks.writeWhole(o);
        this.release(o);
        this.objs.delete(o.id);
        this.ready.push({ obj: o, path: whole });
        return;
      }
      this.writePending(o, true);
      const path = this.disks.finalPath(o);
      try {
        renameSync(o.tmp, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // The fan-out directory was removed under us (operator cleanup): recreate it once.
        mkdirSync(dirname(path), { recursive: true });
        renameSync(o.tmp, path);
      }
      o.tmp = '';
      this.disks.succeeded(o.disk);
      this.objs.delete(o.id);
      this.ready.push({ obj: o, path });
    } catch (err) {
      if (o.disk >= 0) this.disks.ioError(o.disk, err);
      this.fail(o, err);
    }
  }

  /**
   * Bytes of the ring (protocol.ts) an open object still holds: a streaming one writes them to
   * its temp file now, a small one keeps a copy until its end.
   */
  private leaveRing(o: Obj): void {
    const ring = this.ring;
    if (o.fd >= 0) {
      try { this.writePending(o); } catch (err) { this.disks.ioError(o.disk, err); this.fail(o, err); }
      return;
    }
    const p = o.pending;
    for (let i = 0; i < p.length; i++) if (p[i]!.buffer === ring) p[i] = copyOfShared(p[i]!);
  }

  /** Appends the gathered chunks to the temp file (creating it first); `last` closes it. */
  private writePending(o: Obj, last = false): void {
    if (o.fd < 0 && o.disk < 0) this.disks.createTemp(o);
    if (o.pending.length > 0) writeAll(o.fd, o.pending);
    this.release(o);
    if (last) { const fd = o.fd; o.fd = -1; closeSync(fd); }
  }

  private abort(id: number): void {
    const o = this.objs.get(id);
    if (o !== undefined) {
      this.discard(o);
      this.objs.delete(id);
      this.ok.push(id);
      return;
    }
    // Complete but not yet committed: a destroy that lands now must still leave no entry.
    const at = this.ready.findIndex((r) => r.obj.id === id);
    if (at < 0) return; // committed or failed already: it was settled then
    const [r] = this.ready.splice(at, 1);
    if (r!.path !== '') unlinkQuiet(r!.path);
    this.ok.push(id);
  }

  private fail(o: Obj, err: unknown): void {
    this.discard(o);
    this.objs.delete(o.id);
    const e = err as NodeJS.ErrnoException;
    this.err.push([o.id, e.code ?? 'EIO', e.message ?? String(err)]);
  }

  /** Drops what an object holds: gathered chunks, open file, temp file. */
  private discard(o: Obj): void {
    this.release(o);
    if (o.fd >= 0) { try { closeSync(o.fd); } catch { /* nothing left to save */ } o.fd = -1; }
    if (o.tmp !== '') { unlinkQuiet(o.tmp); o.tmp = ''; }
  }

  /** The gathered chunks are written or dropped: they leave the in-flight bound. */
  private release(o: Obj): void {
    // Bytes of a stream still open count against its own bound on the main thread too.
    if (!o.ended && o.pendingBytes > 0) this.acks.push(o.id, o.pendingBytes);
    this.freed += o.pendingBytes;
    this.held -= o.pendingBytes;
    o.pending = [];
    o.pendingBytes = 0;
  }

  /**
   * Index changes of the request path, off its event loop. Rows completed before them are
   * committed first (a 304 update must not be overwritten by the older body's row), then all of
   * them in one transaction; the reply goes out at once, since a client may be waiting for it
   * (an unsafe method's invalidation is committed before its answer is sent).
   */
  private runMetas(metas: [number, MetaOp][]): void {
    this.commit();
    let vals: number[];
    try {
      vals = this.rows.metas(metas);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      for (const [id] of metas) this.err.push([id, e.code ?? 'EIO', e.message ?? String(e)]);
      this.reply();
      return;
    }
    for (const [id] of metas) this.ok.push(id);
    this.vals.push(...vals);
    this.reply();
  }

  /** The batch window of the rows ready now starts (see COMMIT_TIMER_SLACK_MS). */
  private armCommit(): void {
    if (this.commitArmed) return;
    this.commitArmed = true;
    this.readySince = performance.now();
    if (this.commitTimer === undefined) this.commitTimer = setTimeout(() => { this.commitArmed = false; this.commit(); }, this.init.commitDelayMs + COMMIT_TIMER_SLACK_MS);
    else this.commitTimer.refresh();
  }

  /** One IMMEDIATE transaction for every row completed in the batch window. */
  private commit(): void {
    // Pushed away from this commit: under load the next batch's message comes before it fires.
    if (this.commitArmed) { this.commitArmed = false; this.commitTimer?.refresh(); }
    const items = this.ready;
    this.ready = [];
    if (items.length === 0) return;
    const errors = this.rows.commit(items);
    items.forEach((it, i) => {
      const e = errors?.[i] as NodeJS.ErrnoException | undefined;
      if (e === undefined) this.ok.push(it.obj.id);
      else this.err.push([it.obj.id, e.code ?? 'EIO', e.message ?? String(e)]);
    });
    this.reply();
  }

  private scheduleReply(): void {
    if (this.replyScheduled) return;
    this.replyScheduled = true;
    setImmediate(() => { this.replyScheduled = false; this.reply(); });
  }

  private reply(extra: Reply = {}): void {
    const r: Reply = extra;
    if (this.ok.length > 0) { r.ok = this.ok; this.ok = []; }
    if (this.vals.length > 0) { r.vals = this.vals; this.vals = []; }
    if (this.err.length > 0) { r.err = this.err; this.err = []; }
    if (this.freed > 0) { r.freed = this.freed; this.freed = 0; }
    if (this.acks.length > 0) { r.acked = this.acks; this.acks = []; }
    const disks = this.disks.takeChanges();
    if (disks !== undefined) r.disks = disks;
    const evicted = this.rows.takeEvicted();
    if (evicted.length > 0) r.evicted = evicted;
    if (this.ringDone !== this.ringReported) { r.ring = this.ringReported = this.ringDone; }
    if (Object.keys(r).length > 0) this.send(r);
  }

  /** Everything sent before CLOSE is done; objects still open are failed and removed. */
  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const o of [...this.objs.values()]) this.fail(o, Object.assign(new Error('cache store is closed'), { code: 'ECLOSED' }));
    this.commit();
    clearTimeout(this.commitTimer);
    clearInterval(this.refreshTimer);
    this.rows.index.close();
    this.reply({ closed: true });
  }
}
