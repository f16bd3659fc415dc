// The body of a shared fetch as it arrives, teed to the fetch's readers (SharedFetch) and to the
// store, with back-pressure from the store only (the fetch step, fetch.ts). Every cache miss runs
// one, so it is one object that is itself the body's handler, rather than a closure for each
// callback and one for the store's answer.
import type { CacheEntryMeta } from '../../cache/store.js';
import type { StoreSink } from '../../cache/tiered-sink.js';
import { TCP_ERROR } from '../../cache/policy/results.js';
import type { OriginBody } from '../../origin/index.js';
import type { CacheContext } from './context.js';
import type { SharedFetch, StoreWriting } from './inflight.js';
import { sendError } from './respond.js';
import type { Transaction } from './transaction.js';

/** The error answer to clients whose answer had not started. */
export function failWaiting(list: Transaction[], status: number): void {
  for (const w of list) {
    w.cacheResult = TCP_ERROR;
    w.status = status;
    sendError(w.res, status);
  }
}

/**
 * Started once the shared answer's meta is known. A fetch retired by an invalidation (requested
 * before it) stores nothing, and one retired later stops storing; its readers carry on.
 */
export class StoreTee implements StoreWriting {
  /** The store's own write path (no stream per object); a failing disk costs only the disk copy. */
  private sink: StoreSink | undefined;
  /** The body ended and the store is making the object visible: it can no longer be stopped. */
  private ending = false;
  /**
   * The origin's body, until it ended. This object lives until the store commits the copy (with
   * the disk tier, after the writer thread's round trip and commit window), the origin exchange
   * (undici's controller, the request's handler and through it the client's transaction) only
   * until the body's end: held longer, every miss's objects outlived the young generation.
   */
  private body: OriginBody | undefined;

  constructor(private readonly ctx: CacheContext, private readonly f: SharedFetch, meta: CacheEntryMeta, body: OriginBody) {
    this.body = body;
    this.sink = f.retired ? undefined : ctx.store.openSink(meta);
    f.abandonStore = this;
    body.consume(this);
  }

  /** SharedFetch.retire: stops the store write unless it is ending already (then false). */
  abandon(): boolean {
    if (this.ending) return false;
    this.sink?.abort();
    this.sink = undefined;
    // It may have been waiting for the store to drain.
    this.body?.resume();
    return true;
  }

  onData(chunk: Buffer): void {
    this.f.push(chunk);
    const s = this.sink;
    if (s !== undefined && !s.write(chunk)) {
      this.body?.pause();
      s.onDrain(() => this.body?.resume());
    }
  }

  /** Newcomers keep joining this fetch until the stored copy is visible (stored). */
  onEnd(): void {
    this.body = undefined;
    this.f.end();
    if (this.sink === undefined) { this.ctx.inflight.finish(this.f); return; }
    this.ending = true;
    this.sink.end(this.stored);
  }

  private readonly stored = (): void => this.ctx.inflight.finish(this.f);

  /**
   * Readers whose answer had not started (the body broke before its first byte: a broken chunk
   * size) get a 502 like those still waiting; the others a cut connection.
   */
  onError(): void {
    this.sink?.abort();
    this.ctx.inflight.finish(this.f);
    failWaiting(this.f.abort(), 502);
    failWaiting(this.f.takeWaiting(), 502);
  }
}
