// What the stored spans of an object say for one request (RFC 9111 3.3, 3.4): the spans that
// combine (fresh, of the client's variant, under the newest span's strong validator and length),
// and apart from them the spans without a strong validator, each usable alone for a range it
// holds whole and never combined with anything. Kept apart from pieces.ts, which serves them.
import type { CacheEntryMeta, CacheKey, StoredHeaders } from '../../cache/store.js';
import { parseContentRange, spanBase, spanValidator, type Span } from '../../cache/policy/partial.js';
import { evaluateRange, freshnessDecision, type HeaderMap, type RequestControl } from '../../cache/policy/index.js';
import type { CacheContext } from './context.js';
import type { PieceOutcome } from './inflight.js';
import { variantOf } from './rules.js';
import { viewOf } from './stored-view.js';
import type { Transaction } from './transaction.js';

export type Piece = Extract<PieceOutcome, { kind: 'piece' }>;

/** The validator of spans that have no strong one: such a Known is one span, never combined. */
export const WEAK = '';

/** What the spans at hand say about the representation, and where each span's bytes are. */
export interface Known {
  total: number;
  /** The strong validator the spans share, or WEAK. */
  validator: string;
  /** Fields of the newest span, for the answer. */
  headers: StoredHeaders;
  /** The entry Age is computed from (a stand-in when the bytes were fetched just now). */
  meta: CacheEntryMeta;
  spans: Span[];
  /** Per span: the stored entry, or the piece this transaction fetched (filling or filled). */
  sources: (CacheEntryMeta | Piece)[];
}

export function isPiece(s: CacheEntryMeta | Piece): s is Piece {
  return (s as Piece).kind === 'piece';
}

/**
 * The stored spans usable for this request: `strong`, those of its variant that are fresh and
 * combine under the newest span's validator (spans of another representation are deleted); `weak`,
 * the fresh spans without a strong validator, newest first.
 */
export function knownFrom(ctx: CacheContext, tx: Transaction, key: CacheKey, metas: readonly CacheEntryMeta[], control: RequestControl): { strong: Known | undefined; weak: Known[] } {
  const now = ctx.clock.now();
  let k: Known | undefined;
  const weak: Known[] = [];
  const others: CacheEntryMeta[] = [];
  // The newest span names the representation (the list is in no promised order).
  const ordered = [...metas].sort((a, b) => b.cachedAt - a.cachedAt);
  for (const m of ordered) {
    const base = spanBase(m.variantKey);
    if (base === undefined || m.status !== 206 || base !== variantOf(m.vary, tx.req.headers)) continue;
    const cr = m.headers['content-range'];
    const span = parseContentRange(Array.isArray(cr) ? undefined : cr);
    if (span === undefined) continue;
    const view = viewOf(m);
    if (freshnessDecision(m, tx.req.headers as HeaderMap, control, now, tx.host.cachePolicy, view.cc, view.namedFields).kind !== 'fresh') continue;
    const validator = spanValidator(m.headers);
    if (validator === undefined) { weak.push(single(m, span, WEAK)); continue; }
    k ??= { total: span.total, validator, headers: m.headers, meta: m, spans: [], sources: [] };
    if (validator !== k.validator || span.total !== k.total) { others.push(m); continue; }
    k.spans.push(span);
    k.sources.push(m);
  }
  if (others.length > 0) dropSpans(ctx, key, others, undefined);
  return { strong: k, weak };
}

function single(m: CacheEntryMeta, span: Span, validator: string): Known {
  return { total: span.total, validator, headers: m.headers, meta: m, spans: [span], sources: [m] };
}

/** A span holds the client's one range whole (the only use of a span without a strong validator). */
export function holdsRange(tx: Transaction, span: Span, headers: StoredHeaders): boolean {
  if (tx.req.headers.range === undefined) return false;
  const r = evaluateRange('GET', tx.req.headers as HeaderMap, { status: 200, headers }, span.total);
  return r.type === 'single' && r.range.start >= span.start && r.range.end <= span.end;
}

export function fromPiece(ctx: CacheContext, key: CacheKey, o: Piece): Known {
  const now = ctx.clock.now();
  const meta: CacheEntryMeta = {
    key, variantKey: o.base, vary: o.vary, status: 200, headers: o.headers, requestTime: now, cachedAt: now, staleAt: now, deleteAt: now, size: o.span.total,
  };
  return { total: o.span.total, validator: o.validator ?? WEAK, headers: o.headers, meta, spans: [o.span], sources: [o] };
}

/** Spans of another representation are deleted (not the one `keep` just stored over its key). */
export function dropSpans(ctx: CacheContext, key: CacheKey, sources: readonly (CacheEntryMeta | Piece)[], keep: Piece | undefined): void {
  for (const s of sources) {
    if (isPiece(s)) continue;
    if (keep !== undefined && spanBase(s.variantKey) !== undefined && s.variantKey.startsWith(`\u0001${keep.span.start}\u0001`)) continue;
    void ctx.store.delete(key, s.variantKey).catch(() => 0);
  }
}

/**
 * Where a fetch for the gap at `pos` starts: the first byte from `pieceStart` on that no span
 * holds. The aligned piece when its head is missing (the next client may want it), else right
 * after what is held (the bytes are not fetched twice when an origin answered a piece short).
 */
export function firstMissing(spans: readonly Span[], pieceStart: number, pos: number): number {
  let at = pieceStart;
  // Each round moves past one span: at most as many rounds as spans.
  for (let round = 0; round <= spans.length && at < pos; round++) {
    let reach = -1;
    for (const s of spans) if (s.start <= at && s.end >= at && s.end > reach) reach = s.end;
    if (reach < 0) return at;
    at = reach + 1;
  }
  return Math.min(at, pos);
}
