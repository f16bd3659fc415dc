// One piece of a large object fetched from the origin with a Range request, coalesced per piece
// through the inflight table: clients that need the same piece at once share one origin request.
// The piece (at most partSize bytes) fills one buffer that its clients read as it fills: the
// outcome is known at the origin's head, and a client's bytes go out as soon as they arrived
// (the first byte of a range does not wait for the rest of its piece). Once whole, the piece is
// stored as a span of the representation (an origin 206 stored as partial content, RFC 9111
// 3.3); a 206 that turns out to be the whole representation is stored as a complete 200.
import { takeTags } from '../../cache/tags.js';
import type { CacheEntryMeta, CacheKey, StoredHeaders } from '../../cache/store.js';
import { parseContentRange, spanValidator, spanVariantKey, type Span } from '../../cache/policy/partial.js';
import { computeTimes } from '../../cache/policy/freshness.js';
import { originNote } from '../../log/host-logs.js';
import { MAX_STATUS, OriginTrace, statusError, traceAnswered, traceFailed, OriginError } from '../../origin/index.js';
import type { CacheContext } from './context.js';
import type { PieceFill, PieceOutcome } from './inflight.js';
import { dropClientConditionals, withKeyHeaders } from './fetch-keys.js';
import { endToEndResponseHeaders } from './hop-by-hop.js';
import { modifyOriginResponse } from './header-edits.js';
import { originRequestHeaders } from './proxy.js';
import { fieldsToStore, storableResponse, variantOf, varyOf } from './rules.js';
import type { Transaction } from './transaction.js';

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
  const piece = new Promise<PieceOutcome>((resolve) => {
    const host = tx.host;
    const headers = originRequestHeaders(tx);
    dropClientConditionals(headers);
    headers.range = `bytes=${range}`;
    const requestTime = ctx.clock.now();
    const trace = tx.origin = new OriginTrace(host.counterSlot);
    if (host.logs !== undefined) trace.note = originNote(tx, 'GET', false, headers);
    let skipStore = false;
    let ending = false;
    f.abandonStore = () => {
      if (ending) return false;
      skipStore = true;
      return true;
    };
    let answered = false;
    /** Set once a piece is being filled: what an error after the head does to it. */
    let breakOff: (() => void) | undefined;
    /** An answer that is no piece (known at the head, or the origin unreachable): nothing to join. */
    const done = (o: PieceOutcome): void => {
      if (answered) return;
      answered = true;
      ctx.inflight.finish(f);
      f.piece = undefined;
      resolve(o);
    };
    const onError = (err: unknown): void => {
      traceFailed(trace, err);
      breakOff?.();
      done({ kind: 'failed', status: err instanceof OriginError ? err.status : 502 });
    };
    host.origin.dispatch({ method: 'GET', url: tx.url, headers, body: null, trace }, {
      onHead: (upstream, body) => {
        // No HTTP status: the origin failed, as if it had not answered (traced before the body
        // is given up: giving it up aborts the exchange, which would trace a Client-Close).
        if (upstream.statusCode > MAX_STATUS) { onError(statusError(upstream.statusCode)); body.discard(); return; }
        traceAnswered(trace, upstream.statusCode);
        const cachedAt = ctx.clock.now();
        const resHeaders = endToEndResponseHeaders(upstream.headers);
        if (host.net?.backModify !== undefined) modifyOriginResponse(tx, resHeaders);
        const tags = takeTags(resHeaders, host.tags);
        const length = Number(resHeaders['content-length'] ?? -1);
        let span: Span | undefined;
        if (upstream.statusCode === 200) {
          // Ranges ignored: an object of at most one piece is taken whole as it is; of a longer one
          // only the head was read (the caller fetches it whole).
          if (!(length > 0 && length <= host.pieces!.partSize)) { body.discard(); done({ kind: 'whole' }); return; }
          span = { start: 0, end: length - 1, total: length };
        } else if (upstream.statusCode === 206) {
          const cr = resHeaders['content-range'];
          span = parseContentRange(Array.isArray(cr) ? undefined : cr);
        }
        if (span === undefined || (length >= 0 && length !== span.end - span.start + 1)) {
          body.discard();
          done({ kind: 'other', status: upstream.statusCode });
          return;
        }
        const size = span.end - span.start + 1;
        const buf = Buffer.allocUnsafe(size);
        const stored = fieldsToStore(resHeaders, cachedAt, host.cachePolicy);
        const vary = withKeyHeaders(varyOf(stored), host.net?.key?.headers);
        const base = variantOf(vary, tx.req.headers);
        const validator = spanValidator(stored);
        const fill: PieceFill = { got: 0, failed: false, waiting: [] };
        const outcome: PieceOutcome = { kind: 'piece', span, body: buf, fill, headers: stored, validator, vary, base };
        // Known from the head: the clients start now and read the buffer as it fills. The fetch
        // stays joinable (f.piece) until the piece is stored or broke off.
        answered = true;
        resolve(outcome);
        const broke = (): void => {
          if (fill.failed) return;
          fill.failed = true;
          wake(fill);
          f.piece = undefined;
          ctx.inflight.finish(f);
        };
        breakOff = broke;
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
            // Partial content without a strong validator cannot be combined (RFC 9111 3.4): not kept.
            const meta = skipStore || f.retired || (validator === undefined && !isWhole(span))
              ? undefined : spanMeta(key, span, stored, vary, base, requestTime, cachedAt, tx);
            if (meta === undefined) { f.piece = undefined; ctx.inflight.finish(f); return; }
            if (tags !== undefined) meta.tags = tags;
            ending = true;
            // Stored in the next turn: handing 4 MiB to the disk writer takes milliseconds that
            // the clients' last bytes need not wait for. Until the memory copy holds the span, a
            // client that arrives joins this fetch; an invalidation meanwhile finds the fetch
            // ending and waits for it to settle (see retire).
            setImmediate(() => {
              if (f.retired) { f.piece = undefined; ctx.inflight.finish(f); return; }
              const sink = ctx.store.openSink(meta);
              // Ended at once (the piece is all there): the memory copy is visible now, the
              // disk copy follows.
              sink.write(buf);
              f.piece = undefined;
              sink.end(() => ctx.inflight.finish(f));
            });
          },
          onError: () => broke(),
        });
      },
      onError,
    });
  });
  f.piece = piece;
  return piece;
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
export function moreOf(piece: Extract<PieceOutcome, { kind: 'piece' }>, have: number): Promise<boolean> | boolean {
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
