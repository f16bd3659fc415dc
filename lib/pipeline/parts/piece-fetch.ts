// One piece of a large object fetched from the origin with a Range request, coalesced per piece
// through the inflight table: clients that need the same piece at once share one origin request.
// The piece (at most partSize bytes) fills one buffer that its clients read as it fills: the
// outcome is known at the origin's head, and a client's bytes go out as soon as they arrived
// (the first byte of a range does not wait for the rest of its piece). Once whole, the piece is
// stored as a span of the representation (an origin 206 stored as partial content, RFC 9111
// 3.3), with or without a strong validator (pieces-known.ts says which spans combine); a 206
// that turns out to be the whole representation is stored as a complete 200.
import { takeTags } from '../../cache/tags.js';
import type { CacheEntryMeta, CacheKey, StoredHeaders } from '../../cache/store.js';
import { parseContentRange, spanValidator, spanVariantKey, type Span } from '../../cache/policy/partial.js';
import { computeTimes } from '../../cache/policy/freshness.js';
import { fieldsToStore } from '../../cache/policy/not-modified.js';
import { originNote } from '../../log/host-logs.js';
import { MAX_STATUS, OriginTrace, statusError, traceAnswered, traceFailed, OriginError, type OriginBody, type OriginHead } from '../../origin/index.js';
import type { CacheContext } from './context.js';
import type { PieceFill, PieceOutcome, SharedFetch } from './inflight.js';
import { dropClientConditionals, withKeyHeaders } from './fetch-keys.js';
import { endToEndResponseHeaders } from './hop-by-hop.js';
import { modifyOriginResponse } from './header-edits.js';
import { originRequestHeaders } from './proxy.js';
import { storableResponse, variantOf, varyOf } from './rules.js';
import type { Transaction } from './transaction.js';

/** One piece fetch as its stages share it. */
interface PieceJob {
  ctx: CacheContext;
  tx: Transaction;
  key: CacheKey;
  f: SharedFetch;
  trace: OriginTrace;
  requestTime: number;
  resolve: (o: PieceOutcome) => void;
  /** Resolved (the clients know the outcome). */
  answered: boolean;
  /** An invalidation retired the fetch before its store began: nothing is stored. */
  skipStore: boolean;
  /** The store began: an invalidation waits for it instead. */
  ending: boolean;
  /** Set once a piece is being filled: what an error after the head does to it. */
  breakOff?: () => void;
}

/** What the head of a piece's answer says, for filling and storing it. */
interface PieceHead { outcome: Piece; tags: string[] | undefined; cachedAt: number }

type Piece = Extract<PieceOutcome, { kind: 'piece' }>;

/**
 * `range`: the Range spec sent (`a-b` or `-n`). The inflight key carries it, so two clients
 * asking for the same piece share the fetch; a piece fetch is retired by an invalidation of its
 * URL like any other fetch (its bytes still reach its clients, it stores nothing).
 */
export function fetchPiece(ctx: CacheContext, tx: Transaction, key: CacheKey, range: string): Promise<PieceOutcome> {
  const ks = `${key.vhost}\n${key.url}\n\u0002${range}`;
  const running = ctx.inflight.peek(ks);
  if (running?.piece !== undefined && !running.retired) return running.piece;
  const f = ctx.inflight.create(ks, 0);
  f.dropReplay(); // nobody joins it as a streaming fetch: clients wait on `piece`
  const piece = new Promise<PieceOutcome>((resolve) => startPiece(ctx, tx, key, range, f, resolve));
  f.piece = piece;
  return piece;
}

function startPiece(ctx: CacheContext, tx: Transaction, key: CacheKey, range: string, f: SharedFetch, resolve: (o: PieceOutcome) => void): void {
  const host = tx.host;
  const headers = originRequestHeaders(tx);
  dropClientConditionals(headers);
  headers.range = `bytes=${range}`;
  const trace = tx.origin = new OriginTrace(host.counterSlot);
  if (host.logs !== undefined) trace.note = originNote(tx, 'GET', false, headers);
  const job: PieceJob = { ctx, tx, key, f, trace, requestTime: ctx.clock.now(), resolve, answered: false, skipStore: false, ending: false };
  f.abandonStore = {
    abandon: () => {
      if (job.ending) return false;
      job.skipStore = true;
      return true;
    },
  };
  host.origin.dispatch({ method: 'GET', url: tx.url, headers, body: null, trace }, {
    onHead: (upstream, body) => {
      const h = pieceHead(job, upstream, body);
      if (h === undefined) return;
      // Known from the head: the clients start now and read the buffer as it fills. The fetch
      // stays joinable (f.piece) until the piece is stored or broke off.
      job.answered = true;
      resolve(h.outcome);
      fillPiece(job, h, body);
    },
    onError: (err) => failed(job, err),
  });
}

/** An answer that is no piece (known at the head, or the origin unreachable): nothing to join. */
function done(job: PieceJob, o: PieceOutcome): void {
  if (job.answered) return;
  job.answered = true;
  job.ctx.inflight.finish(job.f);
  job.f.piece = undefined;
  job.resolve(o);
}

function failed(job: PieceJob, err: unknown): void {
  traceFailed(job.trace, err);
  job.breakOff?.();
  done(job, { kind: 'failed', status: err instanceof OriginError ? err.status : 502 });
}

/** The piece an answer's head announces, or undefined when the answer is no piece (settled here). */
function pieceHead(job: PieceJob, upstream: OriginHead, body: OriginBody): PieceHead | undefined {
  const { tx } = job;
  const host = tx.host;
  // No HTTP status: the origin failed, as if it had not answered (traced before the body is
  // given up: giving it up aborts the exchange, which would trace a Client-Close).
  if (upstream.statusCode > MAX_STATUS) { failed(job, statusError(upstream.statusCode)); body.discard(); return undefined; }
  traceAnswered(job.trace, upstream.statusCode);
  const cachedAt = job.ctx.clock.now();
  const resHeaders = endToEndResponseHeaders(upstream.headers);
  if (host.net?.backModify !== undefined) modifyOriginResponse(tx, resHeaders);
  const tags = takeTags(resHeaders, host.tags);
  const length = Number(resHeaders['content-length'] ?? -1);
  let span: Span | undefined;
  if (upstream.statusCode === 200) {
    // Ranges ignored: an object of at most one piece is taken whole as it is; of a longer one
    // only the head was read (the caller fetches it whole).
    if (!(length > 0 && length <= host.pieces!.partSize)) { body.discard(); done(job, { kind: 'whole' }); return undefined; }
    span = { start: 0, end: length - 1, total: length };
  } else if (upstream.statusCode === 206) {
    const cr = resHeaders['content-range'];
    span = parseContentRange(Array.isArray(cr) ? undefined : cr);
  }
  if (span === undefined || (length >= 0 && length !== span.end - span.start + 1)) {
    body.discard();
    done(job, { kind: 'other', status: upstream.statusCode });
    return undefined;
  }
  const stored = fieldsToStore(resHeaders, cachedAt, host.cachePolicy);
  const vary = withKeyHeaders(varyOf(stored), host.net?.key?.headers);
  const fill: PieceFill = { got: 0, failed: false, waiting: [] };
  const outcome: Piece = {
    kind: 'piece', span, body: Buffer.allocUnsafe(span.end - span.start + 1), fill, headers: stored, validator: spanValidator(stored), vary, base: variantOf(vary, tx.req.headers),
  };
  return { outcome, tags, cachedAt };
}

/** Fills the piece's buffer as the body arrives, waking its readers; stores it once whole. */
function fillPiece(job: PieceJob, h: PieceHead, body: OriginBody): void {
  const { fill, body: buf } = h.outcome;
  const size = buf.length;
  const broke = (): void => {
    if (fill.failed) return;
    fill.failed = true;
    wake(fill);
    job.f.piece = undefined;
    job.ctx.inflight.finish(job.f);
  };
  job.breakOff = broke;
  body.consume({
    onData: (chunk) => {
      if (fill.failed) return;
      // More than its Content-Range announced: the answer is broken.
      if (fill.got + chunk.length > size) { body.discard(); broke(); return; }
      chunk.copy(buf, fill.got);
      fill.got += chunk.length;
      wake(fill);
    },
    onEnd: () => {
      if (fill.failed) return;
      if (fill.got !== size) { broke(); return; }
      storePiece(job, h);
    },
    onError: () => broke(),
  });
}

/**
 * Stores a whole piece as a span (one without a strong validator too: it serves the ranges it
 * holds, never combined, pieces-known.ts), unless it may not be stored or was retired.
 */
function storePiece(job: PieceJob, h: PieceHead): void {
  const { ctx, f } = job;
  const o = h.outcome;
  const meta = job.skipStore || f.retired ? undefined : spanMeta(job.key, o.span, o.headers, o.vary, o.base, job.requestTime, h.cachedAt, job.tx);
  if (meta === undefined) { f.piece = undefined; ctx.inflight.finish(f); return; }
  if (h.tags !== undefined) meta.tags = h.tags;
  job.ending = true;
  // Stored in the next turn: handing 4 MiB to the disk writer takes milliseconds that the
  // clients' last bytes need not wait for. Until the memory copy holds the span, a client that
  // arrives joins this fetch; an invalidation meanwhile finds the fetch ending and waits for it
  // to settle (see retire).
  setImmediate(() => {
    if (f.retired) { f.piece = undefined; ctx.inflight.finish(f); return; }
    const sink = ctx.store.openSink(meta);
    // Ended at once (the piece is all there): the memory copy is visible now, the disk copy follows.
    sink.write(o.body);
    f.piece = undefined;
    sink.end(() => ctx.inflight.finish(f));
  });
}

/** Wakes the clients waiting for more of a piece (or for its failure). */
function wake(fill: PieceFill): void {
  if (fill.waiting.length === 0) return;
  const waiting = fill.waiting;
  fill.waiting = [];
  for (const w of waiting) w();
}

/**
 * Resolves when the piece holds more than `have` bytes (true) or broke off first (false).
 */
export function moreOf(piece: Piece, have: number): Promise<boolean> | boolean {
  const fill = piece.fill;
  if (fill.got > have) return true;
  if (fill.failed) return false;
  return new Promise((resolve) => {
    const check = (): void => {
      if (fill.got > have) resolve(true);
      else if (fill.failed) resolve(false);
      else fill.waiting.push(check);
    };
    fill.waiting.push(check);
  });
}

/**
 * The stored form of a span: status 206 with the origin's fields (Content-Range kept, so the
 * span is known again; Content-Length the whole length, as fileinfo's Size shows). A span that
 * is the whole representation is a complete 200. Undefined when the answer may not be stored.
 */
function spanMeta(key: CacheKey, span: Span, stored: StoredHeaders, vary: string[], base: string, requestTime: number, cachedAt: number,
  tx: Transaction): CacheEntryMeta | undefined {
  const host = tx.host;
  const whole = isWhole(span);
  const full: StoredHeaders = { ...stored, 'content-length': String(span.total) };
  delete full['content-range'];
  if (!storableResponse('GET', tx.req.headers, 200, full, host.cachePolicy)) return undefined;
  const times = computeTimes({ status: 200, headers: full }, { requestTime, cachedAt }, host.cachePolicy);
  const size = span.end - span.start + 1;
  return {
    key, variantKey: whole ? base : spanVariantKey(span.start, base), vary, status: whole ? 200 : 206,
    headers: whole ? full : { ...full, 'content-range': `bytes ${span.start}-${span.end}/${span.total}` },
    requestTime, cachedAt, staleAt: times.staleAt, deleteAt: times.deleteAt, size,
    volatile: host.volatile && (host.nonVolatileSize <= 0 || size < host.nonVolatileSize),
  };
}

/** A span that is the whole representation: stored and served as a complete 200. */
export function isWhole(span: Span): boolean {
  return span.start === 0 && span.end === span.total - 1;
}
