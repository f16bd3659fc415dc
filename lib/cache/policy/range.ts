// Range requests served from a stored complete representation (RFC 9110 14).
import { randomBytes } from 'node:crypto';
import { parseEntityTag, strongMatch } from './etag.js';
import { headerValue, parseHttpDate, type HeaderMap } from './headers.js';

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

export type RangeResult =
  /** No Range, an invalid one, or one not to apply: serve 200 with the whole body. */
  | { type: 'none' }
  | { type: 'single'; range: ByteRange; contentRange: string }
  | { type: 'multi'; ranges: ByteRange[] }
  /** 416 with this Content-Range (RFC 9110 14.4, 15.5.17). */
  | { type: 'unsatisfiable'; status: 416; contentRange: string };

/** More range specs than this in one request are refused as abuse (RFC 9110 14.2, 17.15): 200. */
export const MAX_RANGES = 16;

const NONE: RangeResult = { type: 'none' };

function digitsOnly(s: string): number {
  if (s.length === 0 || s.length > 15) return -1;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

function contentRange(start: number, end: number, length: number): string {
  return `bytes ${start}-${end}/${length}`;
}

/**
 * Parses `Range: bytes=...` against a representation of `length` bytes. Invalid syntax or an
 * unknown unit means the field is ignored (RFC 9110 14.2); specs that cannot be satisfied are
 * dropped and, when none is left, the answer is 416 with a Content-Range of `bytes *` then `/length`. Overlapping or
 * adjacent ranges are coalesced in ascending order (RFC 9110 14.6 allows it), and more than
 * MAX_RANGES specs are ignored altogether.
 */
export function parseRange(value: string | undefined, length: number): RangeResult {
  if (value === undefined) return NONE;
  const s = value.trim();
  const eq = s.indexOf('=');
  if (eq < 0 || s.slice(0, eq).trim().toLowerCase() !== 'bytes') return NONE;
  const ranges: ByteRange[] = [];
  let count = 0;
  let start = eq + 1;
  for (let i = eq + 1; i <= s.length; i++) {
    if (i !== s.length && s.charCodeAt(i) !== 44) continue;
    const spec = s.slice(start, i).trim();
    start = i + 1;
    if (spec.length === 0) continue; // empty list elements are allowed (RFC 9110 5.6.1)
    if (++count > MAX_RANGES) return NONE;
    const dash = spec.indexOf('-');
    if (dash < 0) return NONE;
    const first = spec.slice(0, dash).trim();
    const last = spec.slice(dash + 1).trim();
    if (first.length === 0) {
      const suffix = digitsOnly(last);
      if (suffix < 0) return NONE;
      if (suffix === 0 || length === 0) continue; // unsatisfiable (RFC 9110 14.1.1)
      ranges.push({ start: Math.max(0, length - suffix), end: length - 1 });
      continue;
    }
    const a = digitsOnly(first);
    if (a < 0) return NONE;
    let b = length - 1;
    if (last.length > 0) {
      b = digitsOnly(last);
      if (b < 0 || b < a) return NONE; // last-pos < first-pos is invalid syntax (14.1.1)
      if (b > length - 1) b = length - 1;
    }
    if (a >= length) continue;
    ranges.push({ start: a, end: b });
  }
  if (count === 0) return NONE;
  if (ranges.length === 0) return { type: 'unsatisfiable', status: 416, contentRange: `bytes */${length}` };
  const merged = coalesce(ranges);
  if (merged.length === 1) {
    const r = merged[0];
    return { type: 'single', range: r, contentRange: contentRange(r.start, r.end, length) };
  }
  return { type: 'multi', ranges: merged };
}

function coalesce(ranges: ByteRange[]): ByteRange[] {
  if (ranges.length === 1) return ranges;
  ranges.sort((x, y) => x.start - y.start);
  const out: ByteRange[] = [ranges[0]];
  for (let k = 1; k < ranges.length; k++) {
    const prev = out[out.length - 1];
    const r = ranges[k];
    if (r.start <= prev.end + 1) { if (r.end > prev.end) prev.end = r.end; }
    else out.push(r);
  }
  return out;
}

/**
 * If-Range (RFC 9110 13.1.5): the range applies only when the validator still matches the stored
 * representation under strong comparison. A weak ETag never matches; a date must equal
 * Last-Modified, and that Last-Modified must itself be strong, i.e. at least one second before
 * the response's Date (RFC 9110 8.8.2.2).
 */
export function ifRangeApplies(ifRange: string | undefined, storedHeaders: HeaderMap): boolean {
  if (ifRange === undefined) return true;
  const v = ifRange.trim();
  if (v.startsWith('W/')) return false;
  if (v.startsWith('"')) {
    const tag = parseEntityTag(v);
    const stored = headerValue(storedHeaders, 'etag');
    const storedTag = stored === undefined ? undefined : parseEntityTag(stored);
    return tag !== undefined && storedTag !== undefined && strongMatch(tag, storedTag);
  }
  const date = parseHttpDate(v);
  const lm = parseHttpDate(headerValue(storedHeaders, 'last-modified'));
  const responseDate = parseHttpDate(headerValue(storedHeaders, 'date'));
  if (Number.isNaN(date) || Number.isNaN(lm) || date !== lm) return false;
  return !Number.isNaN(responseDate) && responseDate - lm >= 1000;
}

/**
 * The whole decision for a request to a stored response: Range is honoured only for GET
 * (RFC 9110 14.2), a stored 200, and an If-Range that still matches.
 */
export function evaluateRange(method: string, reqHeaders: HeaderMap, stored: { status: number; headers: HeaderMap }, length: number): RangeResult {
  const range = headerValue(reqHeaders, 'range');
  if (range === undefined || method.toUpperCase() !== 'GET' || stored.status !== 200) return NONE;
  if (!ifRangeApplies(headerValue(reqHeaders, 'if-range'), stored.headers)) return NONE;
  return parseRange(range, length);
}

/** A fresh boundary for multipart/byteranges (RFC 9110 14.6). */
export function multipartBoundary(): string {
  return randomBytes(12).toString('hex');
}

export interface MultipartPart extends ByteRange {
  /** Delimiter and part header block to write before the part's bytes. */
  head: string;
}

/** The delimiter, part headers and byte range of each part of a multipart/byteranges body. */
export function* multipartParts(ranges: readonly ByteRange[], length: number, contentType: string | undefined, boundary: string): Generator<MultipartPart> {
  const type = contentType === undefined ? '' : `Content-Type: ${contentType}\r\n`;
  for (let k = 0; k < ranges.length; k++) {
    const r = ranges[k];
    const head = `${k === 0 ? '' : '\r\n'}--${boundary}\r\n${type}Content-Range: ${contentRange(r.start, r.end, length)}\r\n\r\n`;
    yield { start: r.start, end: r.end, head };
  }
}

/** The closing delimiter written after the last part. */
export function multipartTrailer(boundary: string): string {
  return `\r\n--${boundary}--\r\n`;
}

/** Content-Length of the whole multipart body, so it need not be chunked. */
export function multipartLength(ranges: readonly ByteRange[], length: number, contentType: string | undefined, boundary: string): number {
  let total = Buffer.byteLength(multipartTrailer(boundary));
  for (const p of multipartParts(ranges, length, contentType, boundary)) total += Buffer.byteLength(p.head) + (p.end - p.start + 1);
  return total;
}

/** Content-Type of a multipart/byteranges response. */
export function multipartContentType(boundary: string): string {
  return `multipart/byteranges; boundary=${boundary}`;
}
