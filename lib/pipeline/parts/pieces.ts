// Serving a GET from the spans of a partially stored object (RFC 9111 3.4): the bytes asked for
// are cut into stretches of stored spans and gaps, each gap is one aligned piece fetched from
// the origin by Range (piece-fetch.ts, coalesced per piece), and the answer streams stretch after
// stretch. The first byte of a range in the middle of a huge object therefore waits at most for
// the bytes before it in its piece (a fetched piece is read as it fills). Spans combine only
// under one strong validator; a piece that comes back with another one means the origin object
// changed: the old spans are dropped, and a client whose status line is not out yet is served
// from the new representation, one whose status line is out is cut.
//
// An origin may answer a piece with fewer bytes than asked (RFC 9110 14 lets a client get less
// than its range): what came is served and stored, and the rest is asked for from where it ended.
// A span without a strong validator (pieces-known.ts) serves only ranges it holds whole.
import type { Readable } from 'node:stream';
import type { CacheEntryMeta, CacheKey } from '../../cache/store.js';
import { pieceAt, planSegments } from '../../cache/policy/partial.js';
import { TCP_ERROR, TCP_HIT, TCP_MISS } from '../../cache/policy/results.js';
import type { CacheContext } from './context.js';
import { keyString } from './fetch-keys.js';
import type { PieceOutcome } from './inflight.js';
import { fetchPiece, isWhole, moreOf } from './piece-fetch.js';
import { dropSpans, firstMissing, fromPiece, holdsRange, isPiece, knownFrom, WEAK, type Known, type Piece } from './pieces-known.js';
import { writeAll, writeFromPiece, writeHead } from './pieces-write.js';
import { proxyToOrigin } from './proxy.js';
import { sendError } from './respond.js';
import { conditionalResult, variantOf } from './rules.js';
import { evaluateRange, type HeaderMap, type RequestControl } from '../../cache/policy/index.js';
import type { Transaction } from './transaction.js';
import { noteForward } from './cache-status.js';

/** Keys of objects whose origin answered a Range with 200 (no ranges): fetched whole from then on. */
const NO_RANGES_MAX = 10_000;

/**
 * Origin answers shorter than asked that one client's answer may take: each costs a round trip,
 * and an origin giving a byte at a time must not keep a client (and the origin) busy for ever.
 */
const MAX_SHORT = 4096;

/** One client's answer from spans and pieces, as it goes. */
interface Answer {
  ctx: CacheContext;
  tx: Transaction;
  key: CacheKey;
  control: RequestControl;
  known: Known;
  /** The spans were fetched for this answer (a miss), not read from the store. */
  fetched: boolean;
  /** Served from the piece that showed the object changed: a second change cuts. */
  seeded: boolean;
  status: number;
  start: number;
  end: number;
  now: number;
  /** Origin answers shorter than asked so far. */
  short: number;
}

interface Segment { start: number; end: number; span: number }

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
  const found = await knownFor(ctx, tx, key, metas, control, seed);
  if (found === undefined) return;
  const a: Answer = { ctx, tx, key, control, ...found, seeded: seed !== undefined, status: 200, start: 0, end: -1, now: ctx.clock.now(), short: 0 };
  if (answeredWithoutBody(a)) return;
  const plan = planSegments(a.known.spans, a.start, a.end, tx.host.pieces!.partSize);
  const gaps = plan.some((s) => s.span < 0);
  if (gaps && a.known.validator === WEAK) {
    // Bytes without a strong validator are never combined with others: the origin answers.
    tx.cacheResult = TCP_MISS;
    noteForward(tx, 'partial');
    proxyToOrigin(tx);
    return;
  }
  tx.cacheResult ??= a.fetched || gaps ? TCP_MISS : TCP_HIT;
  await streamPlan(a, plan);
}

/**
 * What is known of the object for this client: the stored spans that combine, else a stored span
 * without a strong validator that holds the client's range, else the first piece fetched now.
 * Undefined when the client was served another way.
 */
async function knownFor(ctx: CacheContext, tx: Transaction, key: CacheKey, metas: readonly CacheEntryMeta[], control: RequestControl,
  seed: Piece | undefined): Promise<{ known: Known; fetched: boolean } | undefined> {
  if (seed !== undefined) return { known: fromPiece(ctx, key, seed), fetched: true };
  const stored = knownFrom(ctx, tx, key, metas, control);
  if (stored.strong !== undefined) return { known: stored.strong, fetched: false };
  const weak = stored.weak.find((k) => holdsRange(tx, k.spans[0]!, k.headers));
  if (weak !== undefined) return { known: weak, fetched: false };
  const rangeField = tx.req.headers.range;
  noteForward(tx, 'uri-miss');
  if (rangeField === undefined && stored.weak.length > 0) {
    // A whole GET where only spans without a strong validator are stored: fetched whole, as
    // without them (those spans cannot be completed).
    tx.cacheResult = TCP_MISS;
    ctx.fetchWhole(tx, key, !control.noStore);
    return undefined;
  }
  const o = await fetchPiece(ctx, tx, key, firstRange(rangeField, tx.host.pieces!.partSize));
  if (!usable(o, tx)) { passOn(ctx, tx, key, o, control); return undefined; }
  return { known: fromPiece(ctx, key, o), fetched: true };
}

/**
 * Client conditionals are answered from what the spans say of the object (RFC 9110 13.2.2), and
 * an unsatisfiable range with 416; else sets the status and bytes of the answer (several ranges
 * are answered with the whole representation: RFC 9110 14.2 lets a server ignore Range).
 */
function answeredWithoutBody(a: Answer): boolean {
  const { tx, known } = a;
  const cond = conditionalResult('GET', tx.req.headers, 200, known.headers);
  const range = cond !== 'proceed' || tx.req.headers.range === undefined ? undefined
    : evaluateRange('GET', tx.req.headers as HeaderMap, { status: 200, headers: known.headers }, known.total);
  const empty = cond !== 'proceed' ? cond : range?.type === 'unsatisfiable' ? 416 : undefined;
  if (empty !== undefined) {
    tx.cacheResult ??= a.fetched ? TCP_MISS : TCP_HIT;
    writeHead(tx, known, empty, 0, -1, !a.fetched, a.now);
    tx.res.end();
    return true;
  }
  const single = range?.type === 'single' ? range.range : undefined;
  a.status = single === undefined ? 200 : 206;
  a.start = single?.start ?? 0;
  a.end = single?.end ?? known.total - 1;
  return false;
}

/** The answer's bytes, stretch after stretch; a stretch a short piece did not reach is asked for again. */
async function streamPlan(a: Answer, plan: Segment[]): Promise<void> {
  const res = a.tx.res;
  // Grows only after a short piece, at most MAX_SHORT times (fetchGap).
  for (let i = 0; i < plan.length; i++) {
    const seg = plan[i]!;
    const src = await sourceOf(a, seg);
    if (src === undefined) return;
    if (isBytes(src)) {
      if (res.destroyed) { if (!Buffer.isBuffer(src)) src.destroy(); return; }
      head(a);
      if (!(await writeAll(res, src))) return;
      continue;
    }
    const stop = Math.min(seg.end, src.span.end);
    if (stop < seg.end) plan.splice(i + 1, 0, { start: stop + 1, end: seg.end, span: -1 });
    if (!(await sendPiece(a, src, seg.start, stop))) return;
  }
  head(a);
  res.end();
}

function isBytes(src: Buffer | Readable | Piece): src is Buffer | Readable {
  return Buffer.isBuffer(src) || !('kind' in src);
}

function head(a: Answer): void {
  if (!a.tx.res.headersSent) writeHead(a.tx, a.known, a.status, a.start, a.end, !a.fetched, a.now);
}

/** Bytes `from`..`to` of a piece, which may still be arriving; false when the answer ended. */
async function sendPiece(a: Answer, piece: Piece, from: number, to: number): Promise<boolean> {
  const { tx } = a;
  // The piece's first byte of the stretch before the status line (a piece that breaks off
  // before then is a 502), then the bytes as they come.
  if (!(await moreOf(piece, from - piece.span.start))) {
    if (!tx.res.headersSent) tx.cacheResult = TCP_ERROR;
    cut(tx);
    return false;
  }
  if (tx.res.destroyed) return false;
  head(a);
  const sent = await writeFromPiece(tx.res, piece, from, to);
  if (sent === 'broken') cut(tx);
  return sent === 'done';
}

/** Where the bytes of a stretch come from: a stored span, a piece of this answer, or a fetch. */
async function sourceOf(a: Answer, seg: Segment): Promise<Buffer | Readable | Piece | undefined> {
  const from = seg.span < 0 ? undefined : a.known.sources[seg.span];
  if (from !== undefined && isPiece(from)) return from;
  if (from !== undefined) {
    const span = a.known.spans[seg.span]!;
    const obj = await a.ctx.store.get(a.key, from.variantKey);
    if (obj !== undefined && obj.size === span.end - span.start + 1) {
      return obj.body !== undefined ? obj.body.subarray(seg.start - span.start, seg.end - span.start + 1) : obj.openBody(seg.start - span.start, seg.end - span.start);
    }
  }
  // A gap (or a span evicted meanwhile).
  return fetchGap(a, seg);
}

/**
 * The piece holding the first byte of a gap, fetched from the origin from the first byte its
 * aligned piece lacks. A piece answered short of that byte is kept and the rest asked for (at
 * most MAX_SHORT short answers per client answer). Undefined when the answer ended.
 */
async function fetchGap(a: Answer, seg: Segment): Promise<Piece | undefined> {
  const { ctx, tx, known } = a;
  // RFC 9211 2.2: stored partial content did not hold all that was asked.
  if (tx.cacheStatus?.fwd === undefined) noteForward(tx, 'partial');
  const p = pieceAt(seg.start, known.total, tx.host.pieces!.partSize);
  for (;;) {
    const from = firstMissing(known.spans, p.start, seg.start);
    const o = await fetchPiece(ctx, tx, a.key, `${from}-${p.end}`);
    if (o.kind !== 'piece' || o.base !== variantOf(o.vary, tx.req.headers)) {
      if (!tx.res.headersSent) passOn(ctx, tx, a.key, o, a.control);
      else cut(tx);
      return undefined;
    }
    // Another validator or length: the object changed. Bytes without a strong validator are
    // never combined, not even with others of their kind.
    if (o.validator === undefined || o.validator !== known.validator || o.span.total !== known.total) { await changed(a, o); return undefined; }
    // Not what was asked (starting later), or short again once too often: the answer breaks off.
    if (o.span.start > from || (o.span.end < p.end && ++a.short > MAX_SHORT)) { cut(tx); return undefined; }
    if (o.span.end >= seg.start) return o;
    known.spans.push(o.span);
    known.sources.push(o);
  }
}

/** The origin object changed under the stored spans: they go, and the client gets the new one if it can. */
async function changed(a: Answer, o: Piece): Promise<void> {
  dropSpans(a.ctx, a.key, a.known.sources, o);
  if (a.tx.res.headersSent || a.seeded) { cut(a.tx); return; }
  a.tx.cacheResult = TCP_MISS;
  await run(a.ctx, a.tx, a.key, [], a.control, o);
}

/**
 * Bytes of this client's variant that can be combined with others, or need not be: the whole
 * representation, or (without a strong validator) a span that holds the client's range.
 */
function usable(o: PieceOutcome, tx: Transaction): o is Piece {
  if (o.kind !== 'piece' || o.base !== variantOf(o.vary, tx.req.headers)) return false;
  return o.validator !== undefined || isWhole(o.span) || holdsRange(tx, o.span, o.headers);
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
  // Another status (416, 404, 5xx), another variant, or content without a strong validator
  // that does not hold the client's range: the client's own request goes to the origin and its
  // answer to the client.
  proxyToOrigin(tx);
}
