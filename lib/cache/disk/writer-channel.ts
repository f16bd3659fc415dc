// Main-thread end of a disk store's writer thread: queues the ops of every write stream and
// posts them as one message per batch (POST_DELAY_MS; an index change at the end of the turn),
// bounds the body bytes in flight, and settles each stream when the thread confirms its row (see
// protocol.ts for the messages).
import { Worker } from 'node:worker_threads';
import { threadExecArgv } from '../../runtime-args.js';
import { countCacheEvent } from '../events.js';
import type { CacheEntryMeta } from '../store.js';
import { Op, STREAM_BYTES, toWire, type MetaOp, type OpsMessage, type Reply, type WriterInit } from './protocol.js';

/**
 * Size of the ring the body bytes travel in (protocol.ts). The thread frees it message by
 * message, so it only has to hold what is sent while the thread is busy with earlier messages.
 */
const RING_BYTES = 8 * 1024 * 1024;
/** Chunks larger than this get a transferred buffer of their own rather than a ring share. */
const RING_CHUNK_MAX = RING_BYTES / 8;
/**
 * Ring offsets are chosen at the same offset within an 8-byte word as the chunk copied there
 * (the ring's size is a multiple of 8, its memory word-aligned): V8 copies into shared memory
 * with relaxed word moves only when source and target are aligned alike, and byte by byte
 * otherwise. A body chunk from the origin's socket sits anywhere, and a 4 KB copy took 1.15 us
 * instead of 0.17 (64 KB: 18 us instead of 2.4), the largest frame of the disk tier's own on
 * the event loop. The padding costs at most 7 ring bytes a chunk.
 */
const WORD_ALIGN = 7;
/** Bytes queued that are posted at once rather than at the end of the turn. */
const POST_NOW_BYTES = 1024 * 1024;
/**
 * How long the ops of object writes wait to be posted together. Each message wakes the thread,
 * which on a busy core takes the core from the event loop at that moment (a context switch each
 * way, and the thread's work done in the middle of the loop's); one message per event-loop turn
 * was a message every one to three misses, and postMessage was the largest frame of a miss
 * worker's profile with the disk tier on. Nothing waits on these ops but the rows' commit, which
 * the thread batches over writerCommitDelayMs anyway; an index change a client waits for (META),
 * a large object's OPEN and a full batch still go at once or at the end of the turn.
 */
const POST_DELAY_MS = 2;

/**
 * Who hears the thread about one operation: `settle` once (committed, or the error), `ack` as
 * bytes of an object write still open are written. An object write's stream is its own (no
 * closures per object).
 */
export interface Settler {
  settle(err?: Error, value?: number): void;
  ack(bytes: number): void;
}

/**
 * `vhost`: set for an object write (counted in writingByHost until it settles); `kept` false once
 * it was aborted or found too large (settled without an entry: not a Create).
 */
interface Pending { to: Settler; waiting: boolean; vhost?: string; kept?: boolean }

/**
 * The compiled entry beside the compiled library (dist/workers/...); under the test loader the
 * .ts sources run, and the thread gets the loader through execArgv.
 */
function threadEntry(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../../workers/disk-writer-thread.${ext}`, import.meta.url);
}

export class WriterChannel {
  /** Body bytes handed to the thread and not yet written (or dropped) by it. */
  inFlight = 0;
  closed = false;
  private worker: Worker | undefined;
  /**
   * The ops of the next message, words [0, nOps). The array is kept from message to message and
   * a message takes an exact copy: a fresh array per message grew through a chain of larger
   * copies (room for 17 words, then 41, 77 ...), several times its size per message.
   */
  private readonly ops: unknown[] = [];
  private nOps = 0;
  private bufs: ArrayBuffer[] = [];
  /** Body bytes on their way to the thread (protocol.ts); the thread holds the same memory. */
  private readonly ring: Buffer;
  /** Ring bytes ever written (the write position), and those the thread is done with. */
  private ringHead = 0;
  private ringTail = 0;
  /** The ring position of the last message posted. */
  private ringPosted = 0;
  private staged = 0;
  /** A post at the end of the turn is scheduled (setImmediate). */
  private scheduled = false;
  /** The batch timer (POST_DELAY_MS), made once and re-armed (refresh) for each batch. */
  private batchTimer: NodeJS.Timeout | undefined;
  private batching = false;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Streams that ended or were destroyed and wait for the thread: they keep the process up. */
  private waiting = 0;
  /** Streams held back by their own bound, waiting for acknowledgements. */
  private held = 0;
  /** Whether the thread currently keeps the process alive (see updateRef). */
  private refed = false;
  private drainWaiters: (() => void)[] = [];
  private closing: Promise<void> | undefined;
  private onClosed: (() => void) | undefined;

  private readonly init: WriterInit;

  constructor(init: Omit<WriterInit, 'ring'>, readonly maxInFlight: number,
    private readonly onDisk: (idx: number, status: 'Normal' | 'Invalid') => void,
    private readonly onDirectory: (buffer: SharedArrayBuffer) => void) {
    const ring = new SharedArrayBuffer(RING_BYTES);
    this.ring = Buffer.from(ring);
    this.init = { ...init, ring };
  }

  /** Operations (object writes, index changes) handed to the thread and not yet settled. */
  get operations(): number {
    return this.pending.size;
  }

  /** Object writes of each host not yet settled (files open for writing). */
  readonly writingByHost = new Map<string, number>();

  open(meta: CacheEntryMeta, to: Settler): number {
    const id = this.nextId++;
    const vhost = meta.key.vhost;
    this.pending.set(id, { to, waiting: false, vhost, kept: true });
    this.writingByHost.set(vhost, (this.writingByHost.get(vhost) ?? 0) + 1);
    this.nOps = toWire(this.ops, this.op2(Op.OPEN, id), meta);
    if (meta.size >= STREAM_BYTES) this.post(); else this.batch();
    return id;
  }

  /** Copies the chunk (the caller's buffer stays shared with other readers) and queues it. */
  data(id: number, chunk: Buffer): void {
    const len = chunk.length;
    if (len === 0) return;
    this.inFlight += len;
    const at = this.ringSpace(len, chunk.byteOffset);
    if (at >= 0) {
      chunk.copy(this.ring, at);
      this.op5(Op.DATA, id, -1, at, len);
    } else {
      // The ring is full (the thread is behind) or the chunk is huge: a buffer of its own.
      const own = Buffer.allocUnsafeSlow(len);
      chunk.copy(own);
      this.bufs.push(own.buffer as ArrayBuffer);
      this.op5(Op.DATA, id, this.bufs.length - 1, 0, len);
    }
    this.staged += len;
    if (this.staged >= POST_NOW_BYTES) this.post(); else this.batch();
  }

  /**
   * Takes len contiguous ring bytes at an offset congruent to `align` modulo 8 (the chunk's own
   * offset: see WORD_ALIGN); their offset, or -1 when the ring has no room for them.
   */
  private ringSpace(len: number, align: number): number {
    if (len > RING_CHUNK_MAX) return -1;
    const size = this.ring.length;
    let head = this.ringHead;
    head += (align - head) & WORD_ALIGN;
    let at = head % size;
    // A chunk never wraps: the end of the ring is skipped (the thread frees it with the rest).
    if (at + len > size) { head += size - at + (align & WORD_ALIGN); at = align & WORD_ALIGN; }
    if (head + len - this.ringTail > size) return -1;
    this.ringHead = head + len;
    return at;
  }

  /** An index change for the writer thread; resolves with its result once it is committed. */
  meta(op: MetaOp): Promise<number> {
    if (this.closed) return Promise.reject(Object.assign(new Error('cache store is closed'), { code: 'ECLOSED' }));
    return new Promise<number>((resolve, reject) => {
      const id = this.nextId++;
      const to: Settler = { settle: (err, value) => { if (err) reject(err); else resolve(value ?? 0); }, ack: NO_ACK };
      this.pending.set(id, { to, waiting: true });
      this.waiting++;
      this.updateRef();
      this.op3(Op.META, id, op);
      this.schedule();
    });
  }

  end(id: number): void { this.finalOp(Op.END, id); }
  abort(id: number): void {
    this.notKept(id);
    this.finalOp(Op.ABORT, id);
  }

  private notKept(id: number): void {
    const p = this.pending.get(id);
    if (p !== undefined) p.kept = false;
  }

  big(id: number): void {
    this.notKept(id);
    this.op2(Op.BIG, id);
    this.batch();
  }

  /** Calls cb once the bytes in flight are below the bound again. */
  onDrain(cb: () => void): void {
    if (this.inFlight < this.maxInFlight || this.worker === undefined && this.nOps === 0) { cb(); return; }
    this.drainWaiters.push(cb);
    this.updateRef();
  }

  /** Starts the thread ahead of the first write (it loads the SQLite addon and opens the index). */
  start(): void {
    if (!this.closed) this.thread();
  }

  /** A stream starts (+1) or stops (-1) waiting for acknowledgements of its bytes. */
  hold(delta: number): void {
    this.held += delta;
    this.updateRef();
  }

  /** Sends what is queued, lets the thread finish everything sent, and stops it. */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.closed = true;
    if (this.worker === undefined && this.nOps === 0) return (this.closing = Promise.resolve());
    this.op1(Op.CLOSE);
    this.closing = new Promise<void>((resolve) => { this.onClosed = resolve; });
    this.post();
    this.updateRef();
    const w = this.worker;
    return (this.closing = this.closing.then(async () => { await w?.terminate(); }));
  }

  private finalOp(op: number, id: number): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.op2(op, id);
    if (!p.waiting) { p.waiting = true; this.waiting++; this.updateRef(); }
    this.batch();
  }

  // An op's words appended to `ops` (a fixed count each: no rest array); each returns the index after them.
  private op1(a: unknown): number {
    this.ops[this.nOps] = a;
    return ++this.nOps;
  }

  private op2(a: unknown, b: unknown): number {
    const n = this.nOps;
    this.ops[n] = a;
    this.ops[n + 1] = b;
    return (this.nOps = n + 2);
  }

  private op3(a: unknown, b: unknown, c: unknown): number {
    this.op2(a, b);
    return this.op1(c);
  }

  private op5(a: unknown, b: unknown, c: unknown, d: unknown, e: unknown): number {
    this.op3(a, b, c);
    return this.op2(d, e);
  }

  /** Posts what is queued at the end of this turn (a client may be waiting for it). */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => { this.scheduled = false; this.post(); });
  }

  /** Posts what is queued within POST_DELAY_MS, with whatever else comes meanwhile. */
  private batch(): void {
    if (this.batching || this.scheduled) return;
    this.batching = true;
    if (this.batchTimer === undefined) this.batchTimer = setTimeout(() => { this.batching = false; this.post(); }, POST_DELAY_MS);
    else this.batchTimer.refresh();
  }

  private post(): void {
    // A batch posted early (end of turn, a full batch): the timer may still fire, finding nothing.
    this.batching = false;
    if (this.nOps === 0) return;
    const msg: OpsMessage = { ops: this.ops.slice(0, this.nOps), bufs: this.bufs, ring: this.ringHead };
    // What the message holds is cloned by postMessage below: the words may be reused after it.
    this.nOps = 0;
    this.ringPosted = this.ringHead;
    const transfer = this.bufs;
    this.bufs = [];
    this.staged = 0;
    this.thread().postMessage(msg, transfer);
  }

  private thread(): Worker {
    if (this.worker !== undefined) return this.worker;
    const w = new Worker(threadEntry(), { workerData: this.init, execArgv: threadExecArgv() });
    w.on('message', (r: Reply) => this.onReply(r));
    w.on('error', (err) => this.onExit(w, err));
    w.on('exit', (code) => this.onExit(w, new Error(`disk writer thread exited (${code})`)));
    this.worker = w;
    this.refed = true;
    this.updateRef();
    return w;
  }

  /**
   * Idle, the thread must not keep the process alive; a stream waiting for it (ended, destroyed,
   * or held back by a bound) and a close in progress do.
   */
  private updateRef(): void {
    const want = this.waiting > 0 || this.held > 0 || this.drainWaiters.length > 0 || this.closing !== undefined;
    if (want === this.refed || this.worker === undefined) return;
    this.refed = want;
    if (want) this.worker.ref(); else this.worker.unref();
  }

  private onReply(r: Reply): void {
    if (r.freed !== undefined) this.inFlight = Math.max(0, this.inFlight - r.freed);
    if (r.ring !== undefined) this.ringTail = r.ring;
    if (r.disks !== undefined) for (const [idx, status] of r.disks) this.onDisk(idx, status);
    if (r.directory !== undefined) this.onDirectory(r.directory);
    if (r.evicted !== undefined) for (const vhost of r.evicted) countCacheEvent(vhost, 'erase');
    if (r.acked !== undefined) for (let i = 0; i < r.acked.length; i += 2) this.pending.get(r.acked[i]!)?.to.ack(r.acked[i + 1]!);
    if (r.ok !== undefined) {
      let vals: Map<number, number> | undefined;
      if (r.vals !== undefined) { vals = new Map(); for (let i = 0; i < r.vals.length; i += 2) vals.set(r.vals[i]!, r.vals[i + 1]!); }
      for (const id of r.ok) this.settle(id, undefined, vals?.get(id));
    }
    if (r.err !== undefined) for (const [id, code, message] of r.err) this.settle(id, Object.assign(new Error(message), { code }));
    this.drain();
    if (r.closed === true) this.onClosed?.();
  }

  private settle(id: number, err?: Error, value?: number): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    if (p.vhost !== undefined) {
      const n = (this.writingByHost.get(p.vhost) ?? 1) - 1;
      if (n > 0) this.writingByHost.set(p.vhost, n); else this.writingByHost.delete(p.vhost);
      if (err === undefined && p.kept === true) countCacheEvent(p.vhost, 'create');
    }
    if (p.waiting && --this.waiting === 0) this.updateRef();
    p.to.settle(err, value);
  }

  private drain(): void {
    if (this.inFlight >= this.maxInFlight || this.drainWaiters.length === 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const cb of waiters) cb();
    this.updateRef();
  }

  /** The thread is gone (crash, or after close): whatever it held is lost, its streams fail. */
  private onExit(w: Worker, err: Error): void {
    if (this.worker !== w) return;
    this.worker = undefined;
    this.inFlight = 0;
    // What was posted to it is lost with it; what is queued still goes to the next thread.
    this.ringTail = this.ringPosted;
    const code = this.closed ? 'ECLOSED' : 'EWRITERTHREAD';
    for (const id of [...this.pending.keys()]) this.settle(id, Object.assign(new Error(err.message), { code }));
    this.waiting = 0;
    this.drain();
    this.refed = false;
    this.onClosed?.();
  }
}

const NO_ACK = (): void => undefined;
