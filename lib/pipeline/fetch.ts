// Step "fetch" for cacheable requests: one origin fetch per key (coalesced), the answer
// streamed to every waiting client while it is written to the store. An answer that may not be
// stored is not shared either: the first client gets it, the others go to the origin themselves.
// Clients a stored copy answers instead (a refresh) go on to deliver through the driver.
import { takeTags } from '../cache/tags.js';
import type { Readable } from 'node:stream';
import { originNote } from '../log/host-logs.js';
import { MAX_STATUS, OriginError, OriginTrace, statusError, traceAnswered, traceFailed, type OriginBody, type OriginHandler, type OriginHead, type OriginRequest } from '../origin/index.js';
import { endToEndResponseHeaders } from './parts/hop-by-hop.js';
import { pipeBody } from './parts/pipe-body.js';
import { bodyBroke, discard, originRequestHeaders, proxyToOrigin } from './parts/proxy.js';
import type { Transaction } from './parts/transaction.js';
import type { CacheEntryMeta, StoredHeaders } from '../cache/store.js';
import { cacheOf, type CacheContext } from './parts/context.js';
import { dropClientConditionals, keyString } from './parts/fetch-keys.js';
import { answerHeaders } from './parts/stored-view.js';
import { forwardInterim } from './parts/interim.js';
import { modifyOriginResponse } from './parts/header-edits.js';
import { varyOfFetched } from './parts/encode.js';
import { matchFallback, routeFallback, type Found } from './parts/fallback.js';
import type { SharedFetch, SharedHead } from './parts/inflight.js';
import { storableDirectives, variantMatches } from './parts/rules.js';
import { newEntryMeta } from './parts/entry-meta.js';
import { failWaiting, StoreTee } from './parts/store-tee.js';
import { spanValidator } from '../cache/policy/partial.js';
import { noteAlone, noteAnswer, noteOf } from './parts/cache-status.js';
import { resumeToFetch, takePlan, type FetchPlan } from './parts/fetch-plan.js';
import { servePieces } from './parts/pieces.js';
import { DONE, SUSPENDED, type Next } from './parts/runtime-state.js';

/**
 * Step "fetch": what lookup planned (tx.plan). A whole fetch is started or joined and the client
 * waits on it (SUSPENDED): a new answer is streamed to every client waiting, one a stored copy
 * answers (a refresh's 304, a stale copy on error) enters deliver through the driver. A
 * background refresh (stale-while-revalidate) starts and the client goes on to deliver its copy.
 * A GET for stored spans is served by pieces (pieces.ts), which fetches what they lack.
 */
export function fetchStep(tx: Transaction): Next {
  const plan = takePlan(tx);
  const ctx = cacheOf(tx);
  if (plan.pieces !== undefined) { servePieces(ctx, tx, plan.key, plan.pieces, plan.control); return SUSPENDED; }
  fetchAndStore(ctx, tx, plan);
  // A background refresh's client is answered from its copy, unless it was already (a refresh
  // whose 304 did not fit the copy fetches again in the background).
  if (plan.background === true) return tx.stored === undefined ? DONE : 'deliver';
  return SUSPENDED;
}

/**
 * One origin fetch per join key: joins the one in flight when it may, else starts it, the
 * answer streamed to every waiting client while it is written to the store.
 */
function fetchAndStore(ctx: CacheContext, tx: Transaction, plan: FetchPlan): void {
  // Known now, so a client that leaves before the answer is recorded with it too. Its own result
  // if it has one (a client refresh joining a plain refresh stays a client refresh).
  tx.cacheResult ??= plan.result;
  const ks = plan.joinKey ?? keyString(plan.key);
  const share = shareOf(ctx, tx, plan, ks);
  if (share === 'joined') return;
  const f = share === 'alone' ? ctx.inflight.detached(ks, ctx.maxReplayBytes) : ctx.inflight.create(ks, ctx.maxReplayBytes);
  if (plan.background !== true) f.join(tx);
  const fetch = new OriginFetch(ctx, f, tx, plan);
  // dispatch, not request(): no promise, stream or async resource per fetch (OriginSet.dispatch).
  // A pagedesk edit's origin is the edit of the source (lib/pagedesk/producer.ts).
  (tx.pagedesk ?? tx.host.origin).dispatch(fetch, fetch);
}

/**
 * One whole fetch of this step: the origin request, the handler of its answer and, once the
 * answer is shared, the head its readers get. Every cache miss makes one, so it is one object
 * whose fields the callbacks read, rather than a closure for each callback and a literal for the
 * request and the handler.
 */
class OriginFetch implements OriginRequest, OriginHandler, SharedHead {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer | null;
  readonly trace: OriginTrace;
  private readonly requestTime: number;
  /** The stored answer's meta and the fields as the origin sent them (once shared: startShared). */
  private meta: CacheEntryMeta | undefined = undefined;
  private resHeaders: StoredHeaders | undefined = undefined;
  /**
   * The client whose request started the fetch, until the body ended (bodyEnded): the fetch
   * outlives it until its copy is stored, and clients joining then are others.
   */
  private tx: Transaction | undefined;

  constructor(private readonly ctx: CacheContext, private readonly f: SharedFetch, tx: Transaction, private readonly plan: FetchPlan) {
    this.tx = tx;
    const headers = originRequestHeaders(tx);
    dropClientConditionals(headers);
    if (!tx.host.useOriginEncoding) headers['accept-encoding'] = 'identity';
    if (plan.conditional !== undefined) Object.assign(headers, plan.conditional);
    this.headers = headers;
    this.requestTime = ctx.clock.now();
    this.body = tx.postBody ?? null;
    this.method = this.body === null ? 'GET' : 'POST';
    this.url = tx.url;
    const trace = this.trace = tx.origin = new OriginTrace(tx.host.counterSlot);
    if (tx.host.logs !== undefined) trace.note = originNote(tx, this.method, false, headers);
  }

  /** Interim answers go to the clients waiting then; one joining later missed them (they are advisory). */
  onInformational(status: number, fields: Record<string, string | string[]>): void {
    for (const w of this.f.waiting) forwardInterim(w, status, fields);
  }

  onError(err: unknown): void {
    // Only before the body ended (undici reports no error after the answer's end).
    fetchFailed(this.ctx, this.f, this.tx!, this.plan, this.trace, err);
  }

  onHead(upstream: OriginHead, body: OriginBody): void {
    // No HTTP status: the origin failed, as if it had not answered (stale-if-error, fallbacks;
    // traced before the body is given up, which aborts the exchange: a Client-Close).
    if (upstream.statusCode > MAX_STATUS) { this.onError(statusError(upstream.statusCode)); body.discard(); return; }
    traceAnswered(this.trace, upstream.statusCode);
    onAnswer(this.ctx, this.f, this.tx!, this.plan, this.requestTime, upstream, body, this);
  }

  /**
   * The answer is stored and shared: its readers get the head as the cache keeps it (the client
   * whose request fetched it also the fields the cache does not keep). A client whose request
   * selects another variant cannot share it: it enters the fetch step again for a fetch of its own.
   */
  share(meta: CacheEntryMeta, resHeaders: StoredHeaders): void {
    this.meta = meta;
    this.resHeaders = resHeaders;
    const refused = this.f.start(meta, this);
    if (refused.length === 0) return;
    const plan = this.plan;
    for (const w of refused) noteAlone(w);
    for (const w of refused) resumeToFetch(w, { key: plan.key, mayStore: plan.mayStore, result: plan.result, alone: true });
  }

  writeHead(w: Transaction): void {
    const meta = this.meta!;
    w.cacheResult ??= this.plan.result;
    w.status = meta.status;
    noteAnswer(w, meta.status, !this.f.retired, meta.staleAt);
    // No Age in an answer fetched for it (fromCache false): the time is not read.
    const out = answerHeaders(meta, w === this.tx ? this.resHeaders! : meta.headers, meta.cachedAt, w, undefined, false);
    varyOfFetched(w, meta.status, out);
    w.res.writeHead(meta.status, out);
  }

  accepts(w: Transaction): boolean {
    const meta = this.meta!;
    return meta.vary.length === 0 || variantMatches(meta, w.req.headers);
  }

  bodyEnded(): void {
    this.tx = undefined;
    this.resHeaders = undefined;
  }
}

/**
 * How the fetch goes on: 'joined' a fetch in flight (or, for a background refresh, one runs
 * already: nothing to start), 'shared' a new one others may join, 'alone' a new one of this
 * client's own (it selects another Vary variant than the one in flight).
 */
function shareOf(ctx: CacheContext, tx: Transaction, plan: FetchPlan, ks: string): 'joined' | 'shared' | 'alone' {
  if (plan.background === true) return ctx.inflight.get(ks) === undefined ? 'shared' : 'joined';
  if (plan.alone === true) return 'alone';
  const joined = ctx.inflight.get(ks);
  if (joined === undefined) return 'shared';
  const meta = joined.meta;
  // Once the answer's Vary is known, only clients selecting the same variant may share it.
  if (meta !== undefined && meta.vary.length > 0 && !variantMatches(meta, tx.req.headers)) return 'alone';
  noteOf(tx).collapsed = true;
  joined.join(tx);
  return 'joined';
}

/**
 * The origin's answer (an HTTP status): a refresh's intercept, a fallback or pieces may take the
 * waiting clients; else it is stored and shared, or only streamed to the first client.
 */
function onAnswer(ctx: CacheContext, f: SharedFetch, tx: Transaction, plan: FetchPlan, requestTime: number, upstream: OriginHead, body: OriginBody,
  fetch: OriginFetch): void {
  const status = upstream.statusCode;
  const cachedAt = ctx.clock.now();
  const resHeaders = endToEndResponseHeaders(upstream.headers);
  if (tx.host.net?.backModify !== undefined) modifyOriginResponse(tx, resHeaders);
  const tags = takeTags(resHeaders, tx.host.tags);
  if (takenElsewhere(ctx, f, tx, plan, status, resHeaders, body)) return;
  // An error answer does not replace a stored copy that can still be revalidated later.
  const keepStored = plan.keepStoredOnError === true && status >= 500;
  const cc = plan.mayStore && !keepStored ? storableDirectives('GET', tx.req.headers, status, resHeaders, tx.host.cachePolicy) : undefined;
  if (cc === undefined) {
    ctx.inflight.finish(f);
    const [first, ...rest] = f.takeWaiting();
    for (const other of rest) { noteAlone(other); proxyToOrigin(other); }
    if (first === undefined || first.res.destroyed) { body.discard(); return; }
    first.cacheResult ??= plan.result;
    noteAnswer(first, status, false, undefined);
    streamUnstored(first, status, resHeaders, body.readable(), cachedAt);
    return;
  }
  const meta = newEntryMeta(plan.key, status, resHeaders, tx.req.headers, requestTime, cachedAt, tx.host, tx.hook?.cacheTtl, cc);
  if (tags !== undefined) meta.tags = tags;
  fetch.share(meta, resHeaders);
  new StoreTee(ctx, f, meta, body);
}

/**
 * Answers that do not go to the clients as they are: a refresh's intercept served them (a 304,
 * a stale copy), a fallback routes them, or the object is too large to store whole (pieces).
 * True when it took them (the body is given up first).
 */
function takenElsewhere(ctx: CacheContext, f: SharedFetch, tx: Transaction, plan: FetchPlan, status: number, fields: StoredHeaders, body: OriginBody): boolean {
  if (plan.intercept !== undefined && plan.intercept(status, fields, f)) {
    body.discard();
    ctx.inflight.finish(f);
    return true;
  }
  const found = fallbackOf(f, tx, plan, status, fields);
  if (found !== undefined) {
    body.discard();
    routeWaiting(ctx, f, tx, found, status, status, fields);
    return true;
  }
  if (!tooLargeWhole(ctx, tx, plan, status, fields)) return false;
  // Stored in pieces instead (pieces.ts): this whole answer is given up at its head.
  body.discard();
  ctx.inflight.finish(f);
  for (const w of f.takeWaiting()) ctx.toPieces(w, plan.key);
  return true;
}

const NO_FIELDS: StoredHeaders = {};

/**
 * No usable answer came (the origin unreachable, or its answer no HTTP answer): a refresh may
 * serve its stale copy, a fallback may take the clients elsewhere; the rest get the error status.
 */
function fetchFailed(ctx: CacheContext, f: SharedFetch, tx: Transaction, plan: FetchPlan, trace: OriginTrace, err: unknown): void {
  traceFailed(trace, err);
  ctx.inflight.finish(f);
  if (plan.intercept !== undefined && plan.intercept(-1, {}, f)) return;
  const status = plan.unreachableStatus ?? (err instanceof OriginError ? err.status : 502);
  const found = fallbackOf(f, tx, plan, -1, NO_FIELDS);
  if (found !== undefined) { routeWaiting(ctx, f, tx, found, -1, status, NO_FIELDS); return; }
  failWaiting(f.takeWaiting(), status);
}

/**
 * A plain miss answered 200 with a Content-Length above the host's limitMaxRange, by an origin
 * that serves byte ranges of it under a strong validator: such an object is kept in pieces.
 */
function tooLargeWhole(ctx: CacheContext, tx: Transaction, plan: FetchPlan, status: number, headers: StoredHeaders): boolean {
  const pieces = tx.host.pieces;
  if (pieces === undefined || status !== 200 || !plan.mayStore || plan.conditional !== undefined || plan.background === true) return false;
  if (tx.postBody !== undefined || tx.hook !== undefined || tx.pagedesk !== undefined || tx.req.method !== 'GET') return false;
  const length = Number(headers['content-length'] ?? -1);
  if (!(length > pieces.limitMaxRange)) return false;
  const ranges = headers['accept-ranges'];
  if (typeof ranges !== 'string' || !/(^|,)\s*bytes\s*(,|$)/i.test(ranges)) return false;
  return spanValidator(headers) !== undefined && !ctx.noRanges.has(keyString(plan.key));
}

/** A fallback entry for the origin's answer to the client that started the fetch, if any. */
function fallbackOf(f: SharedFetch, tx: Transaction, plan: FetchPlan, status: number, fields: StoredHeaders): Found | undefined {
  if (tx.host.fallbacks === undefined || plan.background === true || !f.waiting.includes(tx)) return undefined;
  return matchFallback(tx, status, fields, true);
}

/**
 * The clients waiting on the fetch are routed as their fallbacks say (the fetch is closed first,
 * so none of them joins it again); one whose own request matches no entry asks the origin
 * itself: the answer it waited for is not stored.
 */
function routeWaiting(ctx: CacheContext, f: SharedFetch, tx: Transaction, found: Found, status: number, sent: number, fields: StoredHeaders): void {
  const waiting = f.takeWaiting();
  ctx.inflight.finish(f);
  for (const w of waiting) {
    const mine = w === tx ? found : matchFallback(w, status, fields, true);
    if (mine !== undefined) routeFallback(w, mine, sent);
    else proxyToOrigin(w);
  }
}

function streamUnstored(tx: Transaction, status: number, headers: StoredHeaders, body: Readable, now: number): void {
  const meta: CacheEntryMeta = {
    key: { vhost: '', url: '' }, variantKey: '', vary: [], status, headers, requestTime: now, cachedAt: now, staleAt: now, deleteAt: now, size: 0,
  };
  const head = (): void => {
    tx.status = status;
    tx.res.writeHead(status, answerHeaders(meta, headers, now, tx, undefined, false));
  };
  if (tx.req.method === 'HEAD') { head(); discard(body); tx.res.end(); return; }
  // pipeBody: an origin that breaks off the body cuts the client once its status line is out (a
  // 502 before: the head waits for the first byte), and a client that leaves stops the origin
  // body; plain pipe() did neither and left the client hanging.
  pipeBody(body, tx.res, (err) => { if (err) bodyBroke(tx); }, head);
}
