// Partial content kept by the cache (RFC 9111 3.3, 3.4): an origin 206 is stored as a span of
// the representation, and spans with the same strong validator combine. Pure rules only: what a
// span is, which validator ties spans together, and which bytes a request still lacks.
import { headerValue, type HeaderMap } from './headers.js';

export interface Span {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
  /** Length of the whole representation. */
  total: number;
}

/** `Content-Range: bytes a-b/T` of a 206 with one part; undefined for anything else (`*`, bad). */
export function parseContentRange(value: string | undefined): Span | undefined {
  if (value === undefined) return undefined;
  const m = /^\s*bytes\s+(\d{1,15})-(\d{1,15})\/(\d{1,15})\s*$/i.exec(value);
  if (m === null) return undefined;
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = Number(m[3]);
  if (end < start || end >= total) return undefined;
  return { start, end, total };
}

/**
 * The strong validator that ties spans together: a strong ETag, else Last-Modified. Undefined
 * when there is neither (or only a weak ETag): such partial content is never combined.
 */
export function spanValidator(headers: HeaderMap): string | undefined {
  const etag = headerValue(headers, 'etag');
  if (etag !== undefined) return etag.trim().startsWith('W/') ? undefined : `e${etag.trim()}`;
  const lm = headerValue(headers, 'last-modified');
  return lm === undefined ? undefined : `l${lm.trim()}`;
}

/**
 * Variant key of a stored span: never equal to a key computed from request fields (they never
 * start with U+0001), so a span is never taken for a complete variant. `base` is the variant
 * key of the request fields (Vary), so spans of different variants stay apart.
 */
export function spanVariantKey(start: number, base: string): string {
  return `\u0001${start}\u0001${base}`;
}

/** The `base` of a span's variant key, undefined when the key is not a span's. */
export function spanBase(variantKey: string): string | undefined {
  if (variantKey.charCodeAt(0) !== 1) return undefined;
  const sep = variantKey.indexOf('\u0001', 1);
  return sep < 0 ? undefined : variantKey.slice(sep + 1);
}

/** A stretch of the requested bytes: from a stored span (its index), or to fetch (`span` -1). */
interface Segment {
  start: number;
  end: number;
  span: number;
}

/**
 * Cuts [start, end] into stretches served by stored spans (the one reaching furthest wins) and
 * gaps to fetch. Gaps are cut at piece boundaries (multiples of `partSize`), so each fetch is
 * one aligned piece the next client can reuse.
 */
export function planSegments(spans: readonly Span[], start: number, end: number, partSize: number): Segment[] {
  const out: Segment[] = [];
  let pos = start;
  while (pos <= end) {
    let best = -1;
    for (let i = 0; i < spans.length; i++) {
      const s = spans[i]!;
      if (s.start <= pos && s.end >= pos && (best < 0 || s.end > spans[best]!.end)) best = i;
    }
    if (best >= 0) {
      const stop = Math.min(end, spans[best]!.end);
      out.push({ start: pos, end: stop, span: best });
      pos = stop + 1;
      continue;
    }
    // A gap: up to the end of this piece, or to where a stored span starts.
    let stop = Math.min(end, (Math.floor(pos / partSize) + 1) * partSize - 1);
    for (const s of spans) if (s.start > pos && s.start - 1 < stop) stop = s.start - 1;
    out.push({ start: pos, end: stop, span: -1 });
    pos = stop + 1;
  }
  return out;
}

/** The aligned piece that holds byte `pos` of a representation of `total` bytes. */
export function pieceAt(pos: number, total: number, partSize: number): { start: number; end: number } {
  const start = Math.floor(pos / partSize) * partSize;
  return { start, end: Math.min(total - 1, start + partSize - 1) };
}
