// Serving a GET from the spans of a partially stored object (RFC 9111 3.4): the bytes asked for
// are cut into stretches of stored spans and gaps, each gap is one aligned piece fetched from
// the origin by Range (piece-fetch.ts, coalesced per piece), and the answer streams stretch after
// stretch. The first byte of a range in the middle of a huge object therefore waits at most for
// the bytes before it in its piece (a fetched piece is read as it fills). Spans combine only under one strong validator; a piece that comes back with another
// one means the origin object changed: the old spans are dropped, and a client whose status line
// is not out yet is served from the new representation, one whose status line is out is cut.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { CacheEntryMeta, CacheKey, StoredHeaders } from '../../cache/store.js';
import { parseContentRange, pieceAt, planSegments, spanBase, spanValidator, type Span } from '../../cache/policy/partial.js';
import { TCP_ERROR, TCP_HIT, TCP_MISS } from '../../cache/policy/results.js';
import type { CacheContext } from './context.js';
import { answerHeaders, NOT_MODIFIED_FIELDS, viewOf } from './stored-view.js';
import { keyString } from './fetch-keys.js';
import type { PieceOutcome } from './inflight.js';
import { fetchPiece, isWhole, moreOf } from './piece-fetch.js';
import { proxyToOrigin } from './proxy.js';
import { sendError } from './respond.js';
import { conditionalResult, variantOf } from './rules.js';
import { evaluateRange, freshnessDecision, type HeaderMap, type RequestControl } from '../../cache/policy/index.js';
import type { Transaction } from './transaction.js';
import { noteForward, noteOf } from './cache-status.js';
import { ttlSeconds } from '../../cache/policy/cache-status.js';

/** What the spans at hand say about the representation, and where each span's bytes are. */
interface Known {
  total: number;
  validator: string;
  /** Fields of the newest span, for the answer. */
  headers: StoredHeaders;
  /** The entry Age is computed from (a stand-in when the bytes were fetched just now). */
  meta: CacheEntryMeta;
  spans: Span[];
  /** Per span: the stored entry, or the piece this transaction fetched (filling or filled). */
  sources: (CacheEntryMeta | Piece)[];
}

type Piece = Extract<PieceOutcome, { kind: 'piece' }>;

/** Keys of objects whose origin answered a Range with 200 (no ranges): fetched whole from then on. */
const NO_RANGES_MAX = 10_000;

function noteNoRanges(ctx: CacheContext, key: CacheKey): void {
  if (ctx.noRanges.size >= NO_RANGES_MAX) ctx.noRanges.clear();
  ctx.noRanges.add(keyString(key));
}

/**
 * Serves `tx` (a GET) from the spans among `metas` (the URL's stored entries),
 * fetching what is missing. Empty `metas`: nothing is known yet, the first piece asked for
 * tells the length.
 */
export function servePieces(ctx: CacheContext, tx: Transaction, key: CacheKey, metas: readonly CacheEntryMeta[], control: RequestControl): void {
  run(ctx, tx, key, metas, control, undefined).catch(() => cut(tx));
}

function cut(tx: Transaction): void {
  if (!tx.res.headersSent) { tx.status = 502; sendError(tx.res, 502); return; }
  tx.aborted = true;
  if (!tx.res.destroyed) tx.res.destroy();
}

async function run(ctx: CacheContext, tx: Transaction, key: CacheKey, metas: readonly CacheEntryMeta[], control: RequestControl,
  seed: Piece | undefined): Promise<void> {
  const partSize = tx.host.pieces!.partSize;
  const rangeField = tx.req.headers.range;
  let known = seed === undefined ? knownFrom(ctx, tx, key, metas, control) : fromPiece(ctx, key, seed);
  let fetched = seed !== undefined;
  if (known === undefined) {
    const o = await fetchPiece(ctx, tx, key, firstRange(rangeField, partSize));
    fetched = true;
    noteForward(tx, 'uri-miss');
    if (!usable(o, tx)) { passOn(ctx, tx, key, o, control); return; }
    known = fromPiece(ctx, key, o);
  }
  const now = ctx.clock.now();
  // Client conditionals are answered from what the spans say of the object (RFC 9110 13.2.2).
  const cond = conditionalResult('GET', tx.req.headers, 200, known.headers);
  if (cond !== 'proceed') {
    tx.cacheResult ??= fetched ? TCP_MISS : TCP_HIT;
    writeHead(tx, known, cond, 0, -1, !fetched, now);
    tx.res.end();
    return;
  }
  const total = known.total;
  const range = rangeField === undefined ? undefined : evaluateRange('GET', tx.req.headers as HeaderMap, { status: 200, headers: known.headers }, total);
  if (range?.type === 'unsatisfiable') {
    tx.cacheResult ??= fetched ? TCP_MISS : TCP_HIT;
    writeHead(tx, known, 416, 0, -1, !fetched, now);
    tx.res.end();
    return;
  }
  // Several ranges are answered with the whole representation (RFC 9110 14.2 lets a server
  // ignore Range); one range with 206.
  const single = range?.type === 'single' ? range.range : undefined;
  const start = single?.start ?? 0;
  const end = single?.end ?? total - 1;
  const plan = planSegments(known.spans, start, end, partSize);
  tx.cacheResult ??= fetched || plan.some((s) => s.span < 0) ? TCP_MISS : TCP_HIT;
  const res = tx.res;
  for (const seg of plan) {
    let bytes: Buffer | Readable | undefined;
    let piece: Piece | undefined;
    const from = seg.span < 0 ? undefined : known.sources[seg.span];
    if (from !== undefined && isPiece(from)) piece = from;
    else if (from !== undefined) {
      const obj = await ctx.store.get(key, from.variantKey);
      if (obj !== undefined && obj.size === known.spans[seg.span]!.end - known.spans[seg.span]!.start + 1) {
        const s = known.spans[seg.span]!.start;
        bytes = obj.body !== undefined ? obj.body.subarray(seg.start - s, seg.end - s + 1) : obj.openBody(seg.start - s, seg.end - s);
      }
    }
    if (bytes === undefined && piece === undefined) {
      // A gap (or a span evicted meanwhile): the aligned piece that holds it.
      const p = pieceAt(seg.start, total, partSize);
      // RFC 9211 2.2: stored partial content did not hold all that was asked.
      if (tx.cacheStatus?.fwd === undefined) noteForward(tx, 'partial');
      const o = await fetchPiece(ctx, tx, key, `${p.start}-${p.end}`);
      if (!usable(o, tx)) {
        if (!res.headersSent) passOn(ctx, tx, key, o, control);
        else cut(tx);
        return;
      }
      if ((o.validator ?? '') !== known.validator || o.span.total !== total) {
        // The origin object changed under the stored spans: they go.
        dropSpans(ctx, key, known.sources, o);
        if (res.headersSent || seed !== undefined) { cut(tx); return; }
        tx.cacheResult = TCP_MISS;
        await run(ctx, tx, key, [], control, o);
        return;
      }
      if (o.span.start > seg.start || o.span.end < seg.end) { cut(tx); return; }
      piece = o;
    }
    if (piece !== undefined) {
      // The piece may still be arriving: its first byte of the segment before the status line
      // (a piece that breaks off before then is a 502), then the bytes as they come.
      if (!(await moreOf(piece, seg.start - piece.span.start))) {
        if (!res.headersSent) tx.cacheResult = TCP_ERROR;
        cut(tx);
        return;
      }
      if (res.destroyed) return;
      if (!res.headersSent) writeHead(tx, known, single === undefined ? 200 : 206, start, end, !fetched, now);
      const sent = await writeFromPiece(res, piece, seg.start, seg.end);
      if (sent === 'broken') { cut(tx); return; }
      if (sent === 'gone') return;
      continue;
    }
    if (res.destroyed) { if (!Buffer.isBuffer(bytes)) bytes!.destroy(); return; }
    if (!res.headersSent) writeHead(tx, known, single === undefined ? 200 : 206, start, end, !fetched, now);
    if (!(await writeAll(res, bytes!))) return;
  }
  if (!res.headersSent) writeHead(tx, known, single === undefined ? 200 : 206, start, end, !fetched, now);
  res.end();
}

function isPiece(s: CacheEntryMeta | Piece): s is Piece {
  return (s as Piece).kind === 'piece';
}

/** Bytes `from`..`to` (of the representation) of a piece, each stretch as soon as it arrived. */
async function writeFromPiece(res: ServerResponse, piece: Piece, from: number, to: number): Promise<'done' | 'gone' | 'broken'> {
  let pos = from - piece.span.start;
  const stop = to - piece.span.start + 1;
  while (pos < stop) {
    if (piece.fill.got <= pos && !(await moreOf(piece, pos))) return 'broken';
    const upTo = Math.min(piece.fill.got, stop);
    if (!(await writeAll(res, piece.body.subarray(pos, upTo)))) return 'gone';
    pos = upTo;
  }
  return 'done';
}

/** The spans usable for this request: its variant, fresh, under the newest span's validator. */
function knownFrom(ctx: CacheContext, tx: Transaction, key: CacheKey, metas: readonly CacheEntryMeta[], control: RequestControl): Known | undefined {
  const now = ctx.clock.now();
  let k: Known | undefined;
  const others: CacheEntryMeta[] = [];
  // The newest span names the representation (the list is in no promised order).
  const ordered = [...metas].sort((a, b) => b.cachedAt - a.cachedAt);
  for (const m of ordered) {
    const base = spanBase(m.variantKey);
    if (base === undefined || m.status !== 206 || base !== variantOf(m.vary, tx.req.headers)) continue;
    const cr = m.headers['content-range'];
    const span = parseContentRange(Array.isArray(cr) ? undefined : cr);
    const validator = spanValidator(m.headers);
    if (span === undefined || validator === undefined) continue;
    const view = viewOf(m);
    if (freshnessDecision(m, tx.req.headers as HeaderMap, control, now, tx.host.cachePolicy, view.cc, view.namedFields).kind !== 'fresh') continue;
    k ??= { total: span.total, validator, headers: m.headers, meta: m, spans: [], sources: [] };
    if (validator !== k.validator || span.total !== k.total) { others.push(m); continue; }
    k.spans.push(span);
    k.sources.push(m);
  }
  if (others.length > 0) dropSpans(ctx, key, others, undefined);
  return k;
}

/** Bytes of this client's variant that can be combined with others (or need not be). */
function usable(o: PieceOutcome, tx: Transaction): o is Piece {
  return o.kind === 'piece' && o.base === variantOf(o.vary, tx.req.headers) && (o.validator !== undefined || isWhole(o.span));
}

function fromPiece(ctx: CacheContext, key: CacheKey, o: Piece): Known {
  const now = ctx.clock.now();
  const meta: CacheEntryMeta = {
    key, variantKey: o.base, vary: o.vary, status: 200, headers: o.headers, requestTime: now, cachedAt: now, staleAt: now, deleteAt: now, size: o.span.total,
  };
  return { total: o.span.total, validator: o.validator ?? '', headers: o.headers, meta, spans: [o.span], sources: [o] };
}

/** Spans of another representation are deleted (not the one `keep` just stored over its key). */
function dropSpans(ctx: CacheContext, key: CacheKey, sources: readonly (CacheEntryMeta | Piece)[], keep: Piece | undefined): void {
  for (const s of sources) {
    if (isPiece(s)) continue;
    if (keep !== undefined && spanBase(s.variantKey) !== undefined && s.variantKey.startsWith(`\u0001${keep.span.start}\u0001`)) continue;
    void ctx.store.delete(key, s.variantKey).catch(() => 0);
  }
}

/** The first piece of an object nothing is known about: where the client's range starts. */
function firstRange(field: string | undefined, partSize: number): string {
  const spec = field === undefined ? undefined : /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(field);
  if (spec === undefined || spec === null) return `0-${partSize - 1}`;
  if (spec[1] === '') {
    const n = Number(spec[2]);
    // bytes=-N: the last min(N, partSize) bytes; they tell the length, the rest comes by piece.
    return spec[2] === '' || n === 0 ? `0-${partSize - 1}` : `-${Math.min(n, partSize)}`;
  }
  const first = Math.floor(Number(spec[1]) / partSize) * partSize;
  return `${first}-${first + partSize - 1}`;
}

/** A piece fetch that did not give usable partial content: the client is served another way. */
function passOn(ctx: CacheContext, tx: Transaction, key: CacheKey, o: PieceOutcome, control: RequestControl): void {
  if (o.kind === 'failed') {
    tx.cacheResult = TCP_ERROR;
    tx.status = o.status;
    sendError(tx.res, o.status);
    return;
  }
  tx.cacheResult = TCP_MISS;
  if (o.kind === 'whole') {
    // The origin ignores Range for this object: fetched and stored whole, as without pieces.
    noteNoRanges(ctx, key);
    ctx.fetchWhole(tx, key, !control.noStore);
    return;
  }
  // Another status (416, 404, 5xx), another variant, or content without a strong validator:
  // the client's own request goes to the origin and its answer to the client.
  proxyToOrigin(tx);
}

function writeHead(tx: Transaction, k: Known, status: number, start: number, end: number, fromCache: boolean, now: number): void {
  const fields: StoredHeaders = { ...k.headers };
  delete fields['content-range'];
  const out = answerHeaders(k.meta, fields, now, tx, undefined, fromCache);
  // Cache-Status ttl of an answer from stored spans: the newest span's.
  if (fromCache && tx.host.cacheStatus !== undefined) noteOf(tx).ttl = ttlSeconds(k.meta.staleAt, now);
  if (status === 304) {
    // Only the fields a 304 carries (deliver.ts), besides ours.
    for (const name of Object.keys(fields)) if (!NOT_MODIFIED_FIELDS.includes(name)) delete out[name];
  } else if (status === 412 || status === 416) {
    if (status === 416) out['content-range'] = `bytes */${k.total}`;
    out['content-length'] = '0';
  } else {
    out['content-length'] = String(end - start + 1);
    if (status === 206) out['content-range'] = `bytes ${start}-${end}/${k.total}`;
  }
  tx.status = status;
  tx.res.writeHead(status, out);
}

/** Writes with back-pressure; false when the client went away. */
async function writeAll(res: ServerResponse, bytes: Buffer | Readable): Promise<boolean> {
  const wait = (): Promise<void> => new Promise((ok) => {
    const done = (): void => { res.off('drain', done); res.off('close', done); ok(); };
    res.on('drain', done);
    res.on('close', done);
  });
  if (Buffer.isBuffer(bytes)) {
    if (!res.write(bytes)) await wait();
    return !res.destroyed;
  }
  try {
    for await (const chunk of bytes) {
      if (res.destroyed) { bytes.destroy(); return false; }
      if (!res.write(chunk as Buffer)) await wait();
    }
  } catch {
    throw new Error('stored span unreadable');
  }
  return !res.destroyed;
}
