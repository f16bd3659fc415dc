// Client conditional requests answered from a stored response (RFC 9110 13, RFC 9111 4.3).
import { type StoredHeaders } from '../store.js';
import { parseEntityTag, parseEntityTagList, strongMatch, weakMatch } from './etag.js';
import { headerValue, isRepeated, parseHttpDate, type HeaderMap } from './headers.js';
import { connectionListed, isHopByHop } from '../../http/hop-by-hop.js';

export type ConditionalResult = 'proceed' | 304 | 412;

export interface StoredLike {
  status: number;
  headers: HeaderMap;
}

function storedEtag(headers: HeaderMap) {
  const v = headerValue(headers, 'etag');
  return v === undefined ? undefined : parseEntityTag(v);
}

/**
 * Evaluates preconditions in RFC 9110 13.2.2 order against the stored response:
 * 1. If-Match (strong) else If-Unmodified-Since -> 412 when false;
 * 2. If-None-Match (weak) -> 304 for GET/HEAD, 412 otherwise, when it matches; else
 *    If-Modified-Since (GET/HEAD only, ignored when If-None-Match is present) -> 304.
 * Preconditions are ignored when the stored status is not 2xx (RFC 9110 13.2.1). Range /
 * If-Range are evaluated by range.ts.
 */
export function evaluateConditional(method: string, reqHeaders: HeaderMap, stored: StoredLike): ConditionalResult {
  if (stored.status < 200 || stored.status > 299) return 'proceed';
  const m = method.toUpperCase();
  const getOrHead = m === 'GET' || m === 'HEAD';
  const h = stored.headers;

  const ifMatch = reqHeaders['if-match'];
  if (ifMatch !== undefined) {
    const list = parseEntityTagList(ifMatch);
    if (list !== '*') {
      const etag = storedEtag(h);
      if (etag === undefined || !list.some((t) => strongMatch(t, etag))) return 412;
    }
  } else {
    const ius = reqHeaders['if-unmodified-since'];
    if (ius !== undefined && !isRepeated(reqHeaders, 'if-unmodified-since')) {
      // RFC 9110 13.1.4: ignored when not a valid date or no modification date is known.
      const since = parseHttpDate(headerValue(reqHeaders, 'if-unmodified-since'));
      const lm = parseHttpDate(headerValue(h, 'last-modified'));
      if (!Number.isNaN(since) && !Number.isNaN(lm) && lm > since) return 412;
    }
  }

  const ifNoneMatch = reqHeaders['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const list = parseEntityTagList(ifNoneMatch);
    let matched: boolean;
    if (list === '*') matched = true;
    else {
      const etag = storedEtag(h);
      matched = etag !== undefined && list.some((t) => weakMatch(t, etag));
    }
    if (matched) return getOrHead ? 304 : 412;
    return 'proceed';
  }

  if (getOrHead) {
    const ims = reqHeaders['if-modified-since'];
    // RFC 9110 13.1.3: ignored when invalid, repeated, or the method is not GET/HEAD.
    if (ims !== undefined && !isRepeated(reqHeaders, 'if-modified-since')) {
      const since = parseHttpDate(headerValue(reqHeaders, 'if-modified-since'));
      if (!Number.isNaN(since) && modifiedAt(h) <= since) return 304;
    }
  }
  return 'proceed';
}

/**
 * When the stored response last changed, for If-Modified-Since (RFC 9111 4.3.2): its
 * Last-Modified, else its Date (an answer is not modified after it was sent). NaN when it has
 * neither: the precondition then cannot be judged here and the request goes on.
 */
function modifiedAt(h: HeaderMap): number {
  const lm = parseHttpDate(headerValue(h, 'last-modified'));
  return Number.isNaN(lm) ? parseHttpDate(headerValue(h, 'date')) : lm;
}

/** True when the client sent a precondition a cache can answer (If-None-Match / If-Modified-Since). */
export function isConditionalRequest(reqHeaders: HeaderMap): boolean {
  return reqHeaders['if-none-match'] !== undefined || reqHeaders['if-modified-since'] !== undefined;
}

/** Validators for revalidating a stored response with the origin (RFC 9111 4.3.1). */
export function buildRevalidationHeaders(entryHeaders: HeaderMap): { 'if-none-match'?: string; 'if-modified-since'?: string } {
  const out: { 'if-none-match'?: string; 'if-modified-since'?: string } = {};
  const etag = headerValue(entryHeaders, 'etag');
  if (etag !== undefined && parseEntityTag(etag) !== undefined) out['if-none-match'] = etag.trim();
  const lm = headerValue(entryHeaders, 'last-modified');
  if (lm !== undefined && !Number.isNaN(parseHttpDate(lm))) out['if-modified-since'] = lm.trim();
  return out;
}

/**
 * True when a 304 refers to the stored response (RFC 9111 4.3.4): when it carries an ETag or a
 * Last-Modified, it must equal the stored one; otherwise it freshens what we asked about.
 */
export function notModifiedMatches(storedHeaders: HeaderMap, headersOf304: HeaderMap): boolean {
  const newEtag = headerValue(headersOf304, 'etag');
  if (newEtag !== undefined) return headerValue(storedHeaders, 'etag')?.trim() === newEtag.trim();
  const newLm = headerValue(headersOf304, 'last-modified');
  if (newLm !== undefined) {
    const oldLm = headerValue(storedHeaders, 'last-modified');
    return oldLm !== undefined && parseHttpDate(oldLm) === parseHttpDate(newLm);
  }
  return true;
}

/**
 * RFC 9111 4.3.4: whether a 304 selects this stored response for update, besides the one whose
 * revalidation it answered: an identical strong validator. A strong ETag; without an ETag in the
 * 304, the same Last-Modified when it is strong (RFC 9110 8.8.2.2: at least a second before
 * the stored response's Date) and the stored response has no ETag. A weak validator selects only
 * the response it was asked for.
 */
export function selectedByNotModified(storedHeaders: HeaderMap, headersOf304: HeaderMap): boolean {
  const newEtag = headerValue(headersOf304, 'etag')?.trim();
  if (newEtag !== undefined) return !newEtag.startsWith('W/') && headerValue(storedHeaders, 'etag')?.trim() === newEtag;
  const newLm = parseHttpDate(headerValue(headersOf304, 'last-modified'));
  if (Number.isNaN(newLm) || headerValue(storedHeaders, 'etag') !== undefined) return false;
  const lm = parseHttpDate(headerValue(storedHeaders, 'last-modified'));
  const date = parseHttpDate(headerValue(storedHeaders, 'date'));
  return lm === newLm && date - lm >= 1000;
}

/**
 * Freshens stored headers with a 304's (RFC 9111 3.2, 4.3.4): every field of the 304 replaces the
 * stored one, except Content-Length, hop-by-hop fields (lib/http/hop-by-hop.ts) and fields the
 * 304's Connection names.
 * Age and Date describe the old message; they are dropped when the 304 lacks them, because the
 * entry's requestTime / cachedAt restart with the revalidation and would otherwise be aged twice.
 */
export function mergeNotModified(storedHeaders: StoredHeaders, headersOf304: HeaderMap): StoredHeaders {
  const nominated = connectionListed(headerValue(headersOf304, 'connection'));
  // The usual 304 repeats what is stored (its validators, its Cache-Control, the Date of the
  // same second): the stored fields are the merged ones, one object for both copies.
  if (repeatsStored(storedHeaders, headersOf304, nominated)) return storedHeaders;
  const out: StoredHeaders = {};
  for (const name in storedHeaders) {
    const v = storedHeaders[name];
    if (v === undefined || name === 'age' || name === 'date') continue;
    out[name] = Array.isArray(v) ? v.slice() : v;
  }
  for (const name in headersOf304) {
    const v = headersOf304[name];
    if (v === undefined || name === 'content-length' || isHopByHop(name) || nominated?.has(name) === true) continue;
    // A value equal to the stored one keeps the stored string: the 304's is garbage at once.
    const kept = out[name];
    out[name] = kept === v ? kept : Array.isArray(v) ? v.slice() : v;
  }
  return out;
}

/**
 * Whether merging the 304 changes nothing: every field it brings is stored with the same value
 * (a repeated field counts as a change), Date among them, and nothing stored is dropped (Age).
 */
function repeatsStored(storedHeaders: StoredHeaders, headersOf304: HeaderMap, nominated: Set<string> | null): boolean {
  const date = headersOf304.date;
  if (typeof date !== 'string' || storedHeaders.date !== date || storedHeaders.age !== undefined) return false;
  for (const name in headersOf304) {
    const v = headersOf304[name];
    if (v === undefined || name === 'content-length' || isHopByHop(name) || nominated?.has(name) === true) continue;
    if (typeof v !== 'string' || storedHeaders[name] !== v) return false;
  }
  return true;
}
