// Cache-Control (RFC 9111 5.2) parsing with a hand-written tokenizer: it runs on every request,
// so no regular expressions and no splitting of the whole value into intermediate arrays. The
// directives of a response, where CDN-Cache-Control (RFC 9213) may take over, are
// cdn-cache-control.ts's responseDirectives.
import { type HeaderMap } from './headers.js';

/** Parsed directives. Seconds fields are undefined when absent. */
export interface CacheDirectives {
  maxAge: number | undefined;
  sMaxage: number | undefined;
  /** true, or the lower-case field names of `no-cache="a, b"`. */
  noCache: true | string[] | undefined;
  noStore: boolean;
  /** true, or the lower-case field names of `private="a, b"`. */
  private: true | string[] | undefined;
  public: boolean;
  mustRevalidate: boolean;
  proxyRevalidate: boolean;
  mustUnderstand: boolean;
  noTransform: boolean;
  immutable: boolean;
  staleWhileRevalidate: number | undefined;
  staleIfError: number | undefined;
  /** true (any staleness) or seconds. */
  maxStale: true | number | undefined;
  minFresh: number | undefined;
  onlyIfCached: boolean;
}

/** Directives of a response as this cache applies them. */
export interface ResponseDirectives extends CacheDirectives {
  /** true when they come from CDN-Cache-Control (then Expires is ignored too, RFC 9213 2.2). */
  targeted: boolean;
}

/** RFC 9111 1.2.2: delta-seconds beyond what we represent become 2^31. */
export const DELTA_SECONDS_MAX = 2147483648;

export function emptyDirectives(): CacheDirectives {
  return {
    maxAge: undefined, sMaxage: undefined, noCache: undefined, noStore: false, private: undefined,
    public: false, mustRevalidate: false, proxyRevalidate: false, mustUnderstand: false,
    noTransform: false, immutable: false, staleWhileRevalidate: undefined, staleIfError: undefined,
    maxStale: undefined, minFresh: undefined, onlyIfCached: false,
  };
}

/** delta-seconds (RFC 9111 1.2.2): digits only; -1 when invalid. */
function deltaSeconds(v: string | undefined): number {
  if (v === undefined || v.length === 0) return -1;
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
    if (n > DELTA_SECONDS_MAX) return DELTA_SECONDS_MAX;
  }
  return n;
}

/** Splits a quoted field-name list (`"set-cookie, X-A"`) into trimmed lower-case names. */
function fieldNames(v: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i <= v.length; i++) {
    if (i === v.length || v.charCodeAt(i) === 44 /* , */) {
      const name = v.slice(start, i).trim().toLowerCase();
      if (name.length > 0 && !out.includes(name)) out.push(name);
      start = i + 1;
    }
  }
  return out;
}

/**
 * Most restrictive merge of `no-cache` / `private` occurrences (RFC 9111 4.2.1): a bare
 * directive wins over field names; field-name lists add up.
 */
function mergeFields(prev: true | string[] | undefined, v: string | undefined): true | string[] {
  if (prev === true || v === undefined) return true;
  const names = fieldNames(v);
  if (names.length === 0) return true;
  if (prev === undefined) return names;
  for (const n of names) if (!prev.includes(n)) prev.push(n);
  return prev;
}

function isWs(c: number): boolean {
  return c === 32 || c === 9;
}

/**
 * Applies one directive. RFC 9111 4.2.1 / 5.2: a duplicated or invalid max-age or s-maxage makes
 * the response stale (0); for the other numeric directives the most restrictive value wins and
 * invalid values are ignored.
 */
function apply(d: CacheDirectives, seen: { maxAge: boolean; sMaxage: boolean }, name: string, value: string | undefined): void {
  switch (name) {
    case 'max-age': {
      const n = deltaSeconds(value);
      d.maxAge = seen.maxAge || n < 0 ? 0 : n;
      seen.maxAge = true;
      break;
    }
    case 's-maxage': {
      const n = deltaSeconds(value);
      d.sMaxage = seen.sMaxage || n < 0 ? 0 : n;
      seen.sMaxage = true;
      break;
    }
    case 'no-cache': d.noCache = mergeFields(d.noCache, value); break;
    case 'private': d.private = mergeFields(d.private, value); break;
    case 'no-store': d.noStore = true; break;
    case 'public': d.public = true; break;
    case 'must-revalidate': d.mustRevalidate = true; break;
    case 'proxy-revalidate': d.proxyRevalidate = true; break;
    case 'must-understand': d.mustUnderstand = true; break;
    case 'no-transform': d.noTransform = true; break;
    case 'immutable': d.immutable = true; break;
    case 'only-if-cached': d.onlyIfCached = true; break;
    case 'stale-while-revalidate': {
      const n = deltaSeconds(value);
      if (n >= 0) d.staleWhileRevalidate = d.staleWhileRevalidate === undefined ? n : Math.min(d.staleWhileRevalidate, n);
      break;
    }
    case 'stale-if-error': {
      const n = deltaSeconds(value);
      if (n >= 0) d.staleIfError = d.staleIfError === undefined ? n : Math.min(d.staleIfError, n);
      break;
    }
    case 'min-fresh': {
      const n = deltaSeconds(value);
      if (n >= 0) d.minFresh = d.minFresh === undefined ? n : Math.max(d.minFresh, n);
      break;
    }
    case 'max-stale': {
      if (value === undefined) { if (d.maxStale === undefined) d.maxStale = true; break; }
      const n = deltaSeconds(value);
      if (n >= 0) d.maxStale = d.maxStale === undefined || d.maxStale === true ? n : Math.min(d.maxStale, n);
      break;
    }
    default: // RFC 9111 5.2.3: unknown extensions are ignored
  }
}

/** Tokenizes one field value into `d` (what does not parse is skipped, member by member). */
function parseInto(d: CacheDirectives, seen: { maxAge: boolean; sMaxage: boolean }, s: string): void {
  const len = s.length;
  let i = 0;
  while (i < len) {
    let c = s.charCodeAt(i);
    if (c === 44 || isWs(c)) { i++; continue; }
    const nameStart = i;
    while (i < len) {
      c = s.charCodeAt(i);
      if (c === 61 /* = */ || c === 44 || isWs(c)) break;
      i++;
    }
    const name = s.slice(nameStart, i).toLowerCase();
    while (i < len && isWs(s.charCodeAt(i))) i++;
    let value: string | undefined;
    if (i < len && s.charCodeAt(i) === 61) {
      i++;
      while (i < len && isWs(s.charCodeAt(i))) i++;
      if (i < len && s.charCodeAt(i) === 34 /* " */) {
        i++;
        let buf = '';
        let from = i;
        let closed = false;
        while (i < len) {
          c = s.charCodeAt(i);
          if (c === 92 /* \ */ && i + 1 < len) { buf += s.slice(from, i); from = i + 1; i += 2; continue; }
          if (c === 34) { closed = true; break; }
          i++;
        }
        value = buf + s.slice(from, i);
        if (closed) i++;
      } else {
        const vStart = i;
        while (i < len) {
          c = s.charCodeAt(i);
          if (c === 44 || isWs(c)) break;
          i++;
        }
        value = s.slice(vStart, i);
      }
    }
    // Anything else before the next comma is junk of this member; skip it.
    while (i < len && s.charCodeAt(i) !== 44) i++;
    if (name.length === 0) continue;
    apply(d, seen, name, value);
  }
}

/** Which of max-age and s-maxage one parse has seen (a parse is synchronous: one object serves all). */
const seen = { maxAge: false, sMaxage: false };

/** Parses a field value (repeated field lines are one list, RFC 9110 5.3) into `d`. */
function parseValue<D extends CacheDirectives>(d: D, value: string | string[] | undefined): D {
  if (value === undefined) return d;
  seen.maxAge = false;
  seen.sMaxage = false;
  if (typeof value === 'string') parseInto(d, seen, value);
  else for (const v of value) parseInto(d, seen, v); // duplicates across lines count
  return d;
}

/** Parses a Cache-Control field value (request or response). */
export function parseCacheControl(value: string | string[] | undefined): CacheDirectives {
  return parseValue(emptyDirectives(), value);
}

/**
 * A response's Cache-Control as its directives (cdn-cache-control.ts responseDirectives decides
 * which field applies): made with `targeted` in place, one object and one shape per parse.
 */
export function parseResponseCacheControl(value: string | string[] | undefined): ResponseDirectives {
  return parseValue({
    maxAge: undefined, sMaxage: undefined, noCache: undefined, noStore: false, private: undefined,
    public: false, mustRevalidate: false, proxyRevalidate: false, mustUnderstand: false,
    noTransform: false, immutable: false, staleWhileRevalidate: undefined, staleIfError: undefined,
    maxStale: undefined, minFresh: undefined, onlyIfCached: false, targeted: false,
  }, value);
}

/**
 * Request directives; RFC 9111 5.4: `Pragma: no-cache` counts as `Cache-Control: no-cache`
 * only when the request has no Cache-Control.
 */
export function requestDirectives(headers: HeaderMap): CacheDirectives {
  const cc = headers['cache-control'];
  const d = parseCacheControl(cc);
  if (cc === undefined) {
    const pragma = headers['pragma'];
    if (pragma !== undefined && pragmaHasNoCache(typeof pragma === 'string' ? pragma : pragma.join(','))) d.noCache = true;
  }
  return d;
}

function pragmaHasNoCache(p: string): boolean {
  let start = 0;
  for (let i = 0; i <= p.length; i++) {
    if (i === p.length || p.charCodeAt(i) === 44) {
      if (p.slice(start, i).trim().toLowerCase() === 'no-cache') return true;
      start = i + 1;
    }
  }
  return false;
}

/** Fields never to send from a stored response without revalidation (RFC 9111 5.2.2.4, 5.2.2.7). */
export function fieldsToStrip(cc: CacheDirectives): string[] {
  const out: string[] = [];
  if (Array.isArray(cc.noCache)) out.push(...cc.noCache);
  if (Array.isArray(cc.private)) for (const n of cc.private) if (!out.includes(n)) out.push(n);
  return out;
}
