// One request of OriginSet.dispatch: an undici dispatch handler that walks the failover list
// like request() does (walk.ts: it is that walk itself) and hands the answer to the caller's
// callbacks. Per request that is one object, where undici's request() builds a request handler
// with an async resource, a promise and a Readable: on the cache miss path that difference is a
// measurable share of the CPU. OriginSet.request runs on it too (a promise and a Readable of
// ours around it), so every exchange's trace is fed here (trace.ts).
//
// undici (8) calls the handler (its v2 interface) from inside its HTTP parser, synchronously,
// with the request's controller: pausing the controller in onResponseStart/onResponseData pauses
// the parser when the callback returns, and controller.resume() continues it (never called
// re-entrantly: only once the parser stopped). undici hands the head already parsed: lower-case
// names, a repeated field (set-cookie) as an array of its values in arrival order, the fields in
// the order of their first arrival; the raw list (name spelling as sent) stays on the
// controller, where the trace measures it (trace.ts). The handler feeds the trace.
// An exception of the caller's callbacks would be taken by undici for an origin failure: it is
// thrown again outside (as from request()'s promise or stream it would have been uncaught).
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { BodyTap } from './body.js';
import type { OriginError } from './errors.js';
import { beginAttempt, traceEnd, traceError, traceHead, traceWriting } from './trace.js';
import type { BodyHandler, OriginBody, OriginHandler, OriginRequest } from './types.js';
import { Walk, type Target, type View } from './walk.js';

type Controller = Dispatcher.DispatchController;
/** The head as undici gives it (never an undefined value). */
type Head = Record<string, string | string[]>;

const OPEN = 0;
const ENDED = 1;
const FAILED = 2;

function rethrow(err: unknown): void {
  process.nextTick(() => { throw err; });
}

function abortError(): Error {
  return Object.assign(new Error('This operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** One request: the failover walk itself (walk.ts), and undici's handler of each attempt. */
export class OriginCall extends Walk implements OriginBody, Dispatcher.DispatchHandler {
  private readonly opts: Dispatcher.DispatchOptions;
  private target: Target | undefined;
  /** The pool of the current attempt (a reset() may swap the endpoint's pool under it). */
  private pool: unknown;
  private tap: BodyTap | null = null;
  /** undici's controller of the current attempt (abort, pause, resume), from onRequestStart. */
  private controller: Controller | null = null;
  private headSeen = false;
  private to: BodyHandler | null = null;
  /** Chunks that arrived before the body was taken. */
  private early: Buffer[] | null = null;
  private state = OPEN;
  private bodyError: Error | undefined;
  /** The caller asked for a pause, and whether undici is paused (by our controller.pause()). */
  private paused = false;
  private parserPaused = false;
  private discarded = false;
  private onAbort: (() => void) | undefined;

  constructor(view: View, r: OriginRequest, inactiveTtlMs: number | undefined, noAnswer: () => OriginError, private readonly h: OriginHandler) {
    super(view, r, inactiveTtlMs, noAnswer);
    this.opts = { method: r.method as Dispatcher.HttpMethod, path: r.url, headers: r.headers, body: null };
  }

  /** Tries the walk's next endpoint, or reports why there is none. */
  attempt(): void {
    const signal = this.r.signal;
    if (signal?.aborted === true) { this.h.onError(signal.reason ?? abortError()); return; }
    const t = this.next(this.opts as { path: string });
    if (t === undefined) { this.h.onError(this.error()); return; }
    this.target = t;
    const src = this.r.body ?? null;
    this.tap = src === null || Buffer.isBuffer(src) ? null : new BodyTap(src);
    this.opts.body = this.tap ?? src;
    this.pool = t.ep.pool;
    if (this.r.trace !== undefined) beginAttempt(this.r.trace, t.ep.hostPort, t.owner.parts.host);
    t.ep.pool.dispatch(this.opts, this);
  }

  // --- undici's side (its v2 handler interface, which it calls without a wrapper) ---

  onRequestStart(controller: Controller): void {
    this.controller = controller;
    // The head undici writes next is this attempt's (trace.ts reads its connection there).
    traceWriting(this.r.trace);
    const signal = this.r.signal;
    if (signal === undefined) return;
    if (signal.aborted) { controller.abort(signal.reason ?? abortError()); return; }
    this.onAbort = () => this.controller?.abort(signal.reason ?? abortError());
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  onResponseStart(controller: Controller, statusCode: number, headers: Head, statusText?: string): void {
    const trace = this.r.trace;
    if (trace !== undefined) traceHead(trace, statusCode, controller.rawHeaders as (Buffer | string)[] | undefined, statusText, headers);
    if (statusCode < 200) {
      // Informational: the answer follows on the same exchange.
      // Called on the request, which may be a class instance (types.ts).
      if (this.r.onInformational !== undefined) try { this.r.onInformational(statusCode, headers); } catch (err) { rethrow(err); }
      return;
    }
    this.headSeen = true;
    const t = this.target!;
    t.ep.succeeded();
    try {
      this.h.onHead({ statusCode, headers, address: t.owner.parts.raw, ip: t.ep.ip, secondary: t.owner.secondary }, this);
    } catch (err) {
      rethrow(err);
    }
    this.flow(controller);
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    const trace = this.r.trace;
    if (trace !== undefined) trace.responseBodyBytes += chunk.length;
    if (this.discarded) return;
    const to = this.to;
    if (to === null) (this.early ??= []).push(chunk);
    else try { to.onData(chunk); } catch (err) { rethrow(err); }
    this.flow(controller);
  }

  onResponseEnd(): void {
    this.state = ENDED;
    this.unlisten();
    if (this.r.trace !== undefined) traceEnd(this.r.trace);
    if (!this.discarded) try { this.to?.onEnd(); } catch (err) { rethrow(err); }
  }

  /** `_controller` is null when the dispatch failed at once (a closed pool, bad options). */
  onResponseError(_controller: Controller | null, err: Error): void {
    this.unlisten();
    if (this.r.trace !== undefined) traceError(this.r.trace, err);
    if (!this.headSeen) {
      // No answer yet: the next address, or the error that ends the walk.
      const fatal = this.failed(this.target!, this.pool, err, this.tap !== null && this.tap.consumed);
      this.controller = null;
      try {
        if (fatal === null) this.attempt();
        else this.h.onError(fatal);
      } catch (e) {
        rethrow(e);
      }
      return;
    }
    this.state = FAILED;
    this.bodyError = err;
    if (!this.discarded) try { this.to?.onError(err); } catch (e) { rethrow(e); }
  }

  // --- the caller's side (OriginBody) ---

  consume(h: BodyHandler): void {
    this.to = h;
    const early = this.early;
    this.early = null;
    if (early !== null) for (const c of early) h.onData(c);
    if (this.state === ENDED) h.onEnd();
    else if (this.state === FAILED) h.onError(this.bodyError!);
    else this.resume();
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    // Once the answer ended (a HEAD's pause is ignored by undici) the connection's parser may
    // carry the next request: only an open answer's pause is ours to lift.
    if (!this.parserPaused || this.to === null || this.state !== OPEN) return;
    this.parserPaused = false;
    this.controller?.resume();
  }

  discard(): void {
    if (this.discarded) return;
    this.discarded = true;
    this.early = null;
    this.to = null;
    if (this.state !== OPEN) return;
    // A short body usually completes within the same read of the parser: give it that chance
    // (the connection is then kept) before cutting the connection.
    queueMicrotask(() => { if (this.state === OPEN) this.controller?.abort(abortError()); });
    if (this.parserPaused) { this.parserPaused = false; this.controller?.resume(); }
  }

  readable(): Readable {
    const rs = new Readable({
      read: () => this.resume(),
      destroy: (err, cb) => { this.discard(); cb(err); },
    });
    this.consume({
      onData: (c) => { if (!rs.push(c)) this.pause(); },
      onEnd: () => { rs.push(null); },
      onError: (e) => { rs.destroy(e); },
    });
    return rs;
  }

  /** Pauses undici's parser unless the body is taken and not paused (or discarded). */
  private flow(controller: Controller): void {
    if (this.discarded || (this.to !== null && !this.paused)) return;
    this.parserPaused = true;
    controller.pause();
  }

  private unlisten(): void {
    if (this.onAbort === undefined) return;
    this.r.signal?.removeEventListener('abort', this.onAbort);
    this.onAbort = undefined;
  }
}
