// Write stream of the disk store. The bytes go to the store's writer thread
// (lib/cache/disk/writer-core.ts), which writes the temp file, renames it into place and only
// then commits the index row; this stream finishes when the thread confirms that commit, so an
// entry is visible to `get` exactly when 'finish' is emitted. Nothing here touches the disk.
import { Writable } from 'node:stream';
import type { WriterChannel } from './disk/writer-channel.js';
import type { CacheEntryMeta } from './store.js';

/**
 * How far one stream may run ahead of its file. Beside the store-wide bound, this keeps one fast
 * producer from holding all of it, and means that a stream whose write() returned true has its
 * earlier bytes (all but this much) in its temp file.
 */
const STREAM_AHEAD_BYTES = 1024 * 1024;

export class DiskWriter extends Writable {
  private readonly id: number = 0;
  private bytes = 0;
  /** Bytes sent to the thread and not yet acknowledged (written or dropped) by it. */
  private unacked = 0;
  private paused: ((err?: Error | null) => void) | undefined;
  private big = false;
  private settled = false;
  private error: Error | undefined;
  /** The callback of _final or _destroy waiting for the thread's answer. */
  private onSettle: ((err?: Error) => void) | undefined;

  /** maxBytes: the largest body any disk may keep; bytes past it are not even sent. */
  constructor(private readonly channel: WriterChannel, meta: CacheEntryMeta, private readonly maxBytes: number) {
    super({ highWaterMark: 64 * 1024 });
    if (channel.closed) {
      this.settled = true;
      process.nextTick(() => this.destroy(Object.assign(new Error('cache store is closed'), { code: 'ECLOSED' })));
      return;
    }
    this.id = channel.open(meta, (err) => this.settle(err), (n) => this.ack(n));
    if (meta.size > maxBytes) this.markBig();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.send(chunk);
    this.pace(cb);
  }

  override _writev(chunks: { chunk: Buffer }[], cb: (err?: Error | null) => void): void {
    for (const c of chunks) this.send(c.chunk);
    this.pace(cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.settled) { cb(this.error); return; }
    this.onSettle = (err) => cb(err);
    this.channel.end(this.id);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.unpause();
    if (this.settled) { cb(err); return; }
    // Wait until the thread has removed what it holds, so 'close' means "nothing left behind".
    this.onSettle = () => cb(err);
    this.channel.abort(this.id);
  }

  private send(chunk: Buffer): void {
    if (this.settled || this.big) return;
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) { this.markBig(); return; }
    this.unacked += chunk.length;
    this.channel.data(this.id, chunk);
  }

  /** Back-pressure: the write completes at once unless the thread is behind by a bound. */
  private pace(cb: (err?: Error | null) => void): void {
    if (this.unacked >= STREAM_AHEAD_BYTES && !this.settled && !this.big) { this.paused = cb; this.channel.hold(1); }
    else if (this.channel.inFlight >= this.channel.maxInFlight) this.channel.onDrain(() => this.pace(cb));
    else cb();
  }

  private ack(n: number): void {
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

  private settle(err?: Error): void {
    this.settled = true;
    this.error = err;
    const waiter = this.onSettle;
    this.onSettle = undefined;
    if (waiter !== undefined) waiter(err);
    // Failed mid-body (a write error in the thread): fail the stream now, not at its end.
    else if (err !== undefined && !this.destroyed) this.destroy(err);
  }
}
