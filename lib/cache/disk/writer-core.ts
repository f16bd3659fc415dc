// The disk store's write path, run in its writer thread (workers/disk-writer-thread.ts), off
// the request path: that is why the file calls here are synchronous (one syscall each instead
// of a FileHandle and a promise round trip per step).
//
// Crash-safety order, per object: the body in its file first (a streaming body in a temp file,
// renamed to its final name at its end; a body that arrived whole written straight under its
// final name), and only then the index row, committed in a transaction (writer-index.ts). A
// process killed at any point leaves at most a temp file (cleaned at the next open) or a final
// file no row names, never a row pointing at a partial body.
import { closeSync, mkdirSync, openSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { fidSource, finalPath, tempPath } from '../disk-files.js';
import { fromWire, Op, STREAM_BYTES, WIRE_META_FIELDS, type MetaOp, type OpsMessage, type Reply, type WireMeta, type WriterInit } from './protocol.js';
import { IndexWriter, type Ready } from './writer-index.js';
import { isIoError, keyHash, unlinkQuiet, writeAll, type Obj } from './writer-io.js';

/** Body bytes a streaming object gathers before they are written to its temp file. */
const FLUSH_BYTES = 256 * 1024;
/** Completed rows that are committed at once instead of waiting for the batch window. */
const COMMIT_NOW_ROWS = 512;


interface DiskState { path: string; quota: number; status: 'Normal' | 'Invalid'; errors: number }

type Send = (reply: Reply) => void;

export class WriterCore {
  private readonly rows: IndexWriter;
  private readonly disks: DiskState[];
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
  private diskChanges: [number, 'Normal' | 'Invalid'][] = [];
  private commitTimer: NodeJS.Timeout | undefined;
  private replyScheduled = false;
  private readonly refreshTimer: NodeJS.Timeout;
  private readonly reportEvery: number;
  private closed = false;
  /** The ring of the body bytes (protocol.ts), and how far it is done with / has said so. */
  private readonly ring: SharedArrayBuffer;
  private ringDone = 0;
  private ringReported = 0;

  /** `report` hears disk errors (3001) and disks taken out of service (3002), for the error log. */
  constructor(private readonly init: WriterInit, private readonly send: Send, private readonly report?: (code: '3001' | '3002', detail: string) => void) {
    this.disks = init.disks.map((d) => ({ ...d, errors: 0 }));
    this.rows = new IndexWriter(init, (disk) => this.disks[disk]!.quota);
    this.ring = init.ring;
    this.reportEvery = Math.max(64 * 1024, Math.min(1 << 20, Math.floor(init.maxInFlightBytes / 8)));
    this.holdLimit = Math.max(FLUSH_BYTES, Math.floor(init.maxInFlightBytes / 4));
    this.refreshTimer = setInterval(() => this.refreshDisks(), init.refreshMs).unref();
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
    if (this.ready.length >= COMMIT_NOW_ROWS) this.commit();
    else if (this.ready.length > 0) this.commitTimer ??= setTimeout(() => this.commit(), this.init.commitDelayMs);
    // A stream may be waiting for its acknowledgements (the per-stream bound), or the main
    // thread for ring space: answer now.
    if (this.freed >= this.reportEvery || this.acks.length > 0 || this.ringDone - this.ringReported >= this.ring.byteLength / 4) this.reply();
    else if (this.ok.length > 0 || this.err.length > 0) this.scheduleReply();
  }

  private open(id: number, meta: WireMeta): void {
    const hash = keyHash(meta);
    const o: Obj = {
      id, meta, hash, fid: this.nextFid(), candidates: this.pickDisks(hash), disk: -1, tmp: '', fd: -1,
      pending: [], pendingBytes: 0, bytes: 0, tooBig: false, ended: false,
    };
    this.objs.set(id, o);
    if (o.candidates.length === 0) { this.fail(o, Object.assign(new Error('no usable cache disk'), { code: 'ENOCACHEDISK' })); return; }
    // A body announced as large streams to disk anyway: create its temp file now, while its
    // bytes are still arriving (the main thread posts such an OPEN at once).
    if (meta.size >= STREAM_BYTES && meta.size <= this.maxObjectBytes(o.candidates[0]!)) {
      try { this.createFile(o); } catch (err) { this.fail(o, err); }
    }
  }

  private data(o: Obj, buf: Buffer): void {
    o.bytes += buf.length;
    o.pending.push(buf);
    o.pendingBytes += buf.length;
    this.held += buf.length;
    if (o.bytes > this.maxObjectBytes(o.disk >= 0 ? o.disk : o.candidates[0]!)) this.markTooBig(o);
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
        const whole = this.writeWhole(o);
        this.objs.delete(o.id);
        this.ready.push({ obj: o, path: whole });
        return;
      }
      this.writePending(o, true);
      const path = finalPath(this.disks[o.disk]!.path, o.fid);
      try {
        renameSync(o.tmp, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // The fan-out directory was removed under us (operator cleanup): recreate it once.
        mkdirSync(dirname(path), { recursive: true });
        renameSync(o.tmp, path);
      }
      o.tmp = '';
      this.disks[o.disk]!.errors = 0;
      this.objs.delete(o.id);
      this.ready.push({ obj: o, path });
    } catch (err) {
      if (o.disk >= 0) this.ioError(o.disk, err);
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
      try { this.writePending(o); } catch (err) { this.ioError(o.disk, err); this.fail(o, err); }
      return;
    }
    const p = o.pending;
    for (let i = 0; i < p.length; i++) if (p[i]!.buffer === ring) p[i] = Buffer.from(p[i]!);
  }

  /** Appends the gathered chunks to the temp file (creating it first); `last` closes it. */
  private writePending(o: Obj, last = false): void {
    if (o.fd < 0 && o.disk < 0) this.createFile(o);
    if (o.pending.length > 0) writeAll(o.fd, o.pending);
    this.release(o);
    if (last) { const fd = o.fd; o.fd = -1; closeSync(fd); }
  }

  /**
   * Creates the temp file on the first candidate disk that takes it; a disk that fails here is
   * skipped for this object, so writes move to the other disks even before the failing one
   * reaches its error limit.
   */
  private createFile(o: Obj): void {
    for (const idx of o.candidates) {
      if (this.disks[idx]!.status !== 'Normal') continue;
      const tmp = tempPath(this.disks[idx]!.path, o.fid);
      try {
        o.fd = openSync(tmp, 'wx');
        o.tmp = tmp;
        o.disk = idx;
        return;
      } catch (err) {
        if (!isIoError(err)) throw err;
        this.ioError(idx, err);
      }
    }
    throw Object.assign(new Error('no usable cache disk'), { code: 'ENOCACHEDISK' });
  }

  /**
   * A body that arrived whole goes straight to its final name: open, one write, close, no
   * rename. That is as crash-safe as the temp file: no reader finds a body file before its row
   * commits, so a process killed mid-write leaves a file no row names, just like one killed
   * between a rename and the commit. Returns the path; disks that fail are skipped (createFile).
   */
  private writeWhole(o: Obj): string {
    for (const idx of o.candidates) {
      if (this.disks[idx]!.status !== 'Normal') continue;
      const path = finalPath(this.disks[idx]!.path, o.fid);
      let fd = -1;
      try {
        try {
          fd = openSync(path, 'wx');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
          // The fan-out directory was removed under us (operator cleanup): recreate it once.
          mkdirSync(dirname(path), { recursive: true });
          fd = openSync(path, 'wx');
        }
        if (o.pending.length > 0) writeAll(fd, o.pending);
        closeSync(fd);
        o.disk = idx;
        this.disks[idx]!.errors = 0;
        this.release(o);
        return path;
      } catch (err) {
        if (fd >= 0) { try { closeSync(fd); } catch { /* already failing */ } unlinkQuiet(path); }
        if (!isIoError(err)) throw err;
        this.ioError(idx, err);
      }
    }
    throw Object.assign(new Error('no usable cache disk'), { code: 'ENOCACHEDISK' });
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

  /** One IMMEDIATE transaction for every row completed in the batch window. */
  private commit(): void {
    if (this.commitTimer !== undefined) { clearTimeout(this.commitTimer); this.commitTimer = undefined; }
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
    if (this.diskChanges.length > 0) { r.disks = this.diskChanges; this.diskChanges = []; }
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
    clearInterval(this.refreshTimer);
    this.rows.index.close();
    this.reply({ closed: true });
  }

  private pickDisks(hash: string): number[] {
    const ok = this.disks.flatMap((d, i) => (d.status === 'Normal' ? [i] : []));
    if (ok.length < 2) return ok;
    // A stable start per object spreads objects over the disks; the rest are fallbacks.
    const start = parseInt(hash.slice(0, 8), 16) % ok.length;
    return [...ok.slice(start), ...ok.slice(0, start)];
  }

  private maxObjectBytes(idx: number): number {
    return Math.min(this.init.maxObjectBytes ?? Infinity, this.disks[idx]?.quota ?? 0);
  }

  private ioError(idx: number, err: unknown): void {
    const d = this.disks[idx];
    if (d === undefined || d.status === 'Invalid') return;
    this.report?.('3001', `${d.path}: ${(err as Error).message}`);
    if (++d.errors < this.init.maxConsecutiveErrors) return;
    d.status = 'Invalid';
    this.report?.('3002', `${d.path} after ${d.errors} consecutive errors`);
    this.diskChanges.push([idx, 'Invalid']);
    try { this.rows.index.setDiskStatus(idx, 'Invalid'); } catch { /* the local state still holds */ }
  }

  /** Statuses other processes changed (a disk they marked Invalid). */
  private refreshDisks(): void {
    try {
      for (const row of this.rows.index.disks()) {
        const d = this.disks[row.idx];
        if (d !== undefined) d.status = row.status;
      }
    } catch {
      // Busy or closing: the next period reads them again.
    }
  }
}
