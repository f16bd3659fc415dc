// Write path of the disk store. The bytes go to the store's writer thread
// (lib/cache/disk/writer-core.ts), which writes the body file and only then commits the index
// row; a write is done when the thread confirms that commit, so an entry is visible to `get`
// exactly then. Nothing here touches the disk.
//
// DiskSink is that path as a plain object (the tiered store's miss path uses it directly, with
// no stream machinery per object); DiskWriter wraps it in the Writable of the store contract.
import { Writable } from 'node:stream';
import type { Settler, WriterChannel } from './disk/writer-channel.js';
import type { CacheEntryMeta } from './store.js';

/**
 * How far one stream may run ahead of its file. Beside the store-wide bound, this keeps one fast
 * producer from holding all of it, and means that a stream whose write() returned true has its
 * earlier bytes (all but this much) in its temp file.
 */
const STREAM_AHEAD_BYTES = 1024 * 1024;

export class DiskSink implements Settler {
  private readonly id: number = 0;
  private bytes = 0;
  /** Bytes sent to the thread and not yet acknowledged (written or dropped) by it. */
  private unacked = 0;
  private paused: (() => void) | undefined;
  private big = false;
  private settled = false;
  private error: Error | undefined;
  /** The callback of end() or abort() waiting for the thread's answer. */
  private onSettle: ((err?: Error) => void) | undefined;
  /** Told (once) when the object fails before end() or abort() was called. */
  onFail: ((err: Error) => void) | undefined;

  /** maxBytes: the largest body any disk may keep; bytes past it are not even sent. */
  constructor(private readonly channel: WriterChannel, meta: CacheEntryMeta, private readonly maxBytes: number) {
    if (channel.closed) {
      this.settled = true;
      this.error = Object.assign(new Error('cache store is closed'), { code: 'ECLOSED' });
      process.nextTick(() => this.onFail?.(this.error!));
      return;
    }
    this.id = channel.open(meta, this);
    if (meta.size > maxBytes) this.markBig();
  }

  /** Queues the bytes for the thread (a copy: the caller's chunk stays shared). */
  send(chunk: Buffer): void {
    if (this.settled || this.big) return;
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) { this.markBig(); return; }
    this.unacked += chunk.length;
    this.channel.data(this.id, chunk);
  }

  /** Whether more bytes may be sent now (else wait for pace()). */
  ready(): boolean {
    return !this.aheadOfFile() && this.channel.inFlight < this.channel.maxInFlight;
  }

  /** Back-pressure: calls cb at once unless the thread is behind by a bound, else once it caught up. */
  pace(cb: () => void): void {
    if (this.aheadOfFile()) { this.paused = cb; this.channel.hold(1); }
    else if (this.channel.inFlight >= this.channel.maxInFlight) this.channel.onDrain(() => this.pace(cb));
    else cb();
  }

  /** The body is complete: cb once its row is committed (or with the error that kept it out). */
  end(cb: (err?: Error) => void): void {
    if (this.settled) { cb(this.error); return; }
    this.onSettle = cb;
    this.channel.end(this.id);
  }

  /** Drops the object; cb once the thread has removed what it held (nothing is left behind). */
  abort(cb?: () => void): void {
    this.unpause();
    if (this.settled) { cb?.(); return; }
    this.onSettle = () => cb?.();
    this.channel.abort(this.id);
  }

  private aheadOfFile(): boolean {
    return this.unacked >= STREAM_AHEAD_BYTES && !this.settled && !this.big;
  }

  /** The thread wrote (or dropped) n more bytes of this object (WriterChannel). */
  ack(n: number): void {
    this.unacked -= n;
    const cb = this.paused;
    if (cb === undefined || this.unacked >= STREAM_AHEAD_BYTES) return;
    this.unpause();
    this.pace(cb);
  }

  private unpause(): void {
    if (this.paused === undefined) return;
    this.paused = undefined;
    this.channel.hold(-1);
  }

  /** Too large for every disk: not kept, but the caller finishes writing normally. */
  private markBig(): void {
    this.big = true;
    this.channel.big(this.id);
  }

  /** The thread committed the object's row, or failed it (WriterChannel). */
  settle(err?: Error): void {
    this.settled = true;
    this.error = err;
    const waiter = this.onSettle;
    this.onSettle = undefined;
    if (waiter !== undefined) waiter(err);
    // Failed mid-body (a write error in the thread): say so now, not at the end.
    else if (err !== undefined) this.onFail?.(err);
  }
}

/** The store contract's write stream over a DiskSink. */
export class DiskWriter extends Writable {
  private readonly sink: DiskSink;

  constructor(channel: WriterChannel, meta: CacheEntryMeta, maxBytes: number) {
    super({ highWaterMark: 64 * 1024 });
    this.sink = new DiskSink(channel, meta, maxBytes);
    this.sink.onFail = (err) => { if (!this.destroyed) this.destroy(err); };
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.sink.send(chunk);
    this.sink.pace(() => cb());
  }

  override _writev(chunks: { chunk: Buffer }[], cb: (err?: Error | null) => void): void {
    for (const c of chunks) this.sink.send(c.chunk);
    this.sink.pace(() => cb());
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.sink.end((err) => cb(err));
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    // Waits until the thread has removed what it holds, so 'close' means "nothing left behind".
    this.sink.abort(() => cb(err));
  }
}
