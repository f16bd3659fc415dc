// Freshness lifetime, age and the absolute times of a stored entry (RFC 9111 4.2).
import type { CacheDirectives, ResponseDirectives } from './cache-control.js';
import { responseDirectives } from './cdn-cache-control.js';
import { hasValidator, headerValue, isRepeated, parseHttpDate, type HeaderMap } from './headers.js';
import { defaultPolicyOptions, type CachePolicyOptions } from './options.js';
import { CACHEABLE_BY_DEFAULT, isNegativeStatus } from './status.js';

export interface ResponseLike {
  status: number;
  headers: HeaderMap;
}

/** Where a lifetime came from; the pipeline uses it for NEGATIVE_HIT and logging. */
type FreshnessSource = 's-maxage' | 'max-age' | 'expires' | 'default-ttl' | 'negative-ttl' | 'heuristic' | 'none';

export interface Freshness {
  /** Seconds, an integer >= 0. */
  lifetime: number;
  source: FreshnessSource;
}

/** True when the response itself states how long it is fresh (RFC 9111 4.2.1). */
export function hasExplicitFreshness(headers: HeaderMap, cc: ResponseDirectives = responseDirectives(headers)): boolean {
  return cc.sMaxage !== undefined || cc.maxAge !== undefined || (!cc.targeted && headers['expires'] !== undefined);
}

/**
 * RFC 9111 4.2.1 in shared-cache order: s-maxage, then max-age, then Expires - Date; else the
 * operator TTLs (defaultTtl for 200, negativeTtl for isNegativeStatus) and finally the
 * Last-Modified heuristic of RFC 9111 4.2.2, which is only allowed for statuses cacheable by
 * default or responses marked public.
 */
export function freshness(
  res: ResponseLike & { responseTime?: number },
  opts: CachePolicyOptions = defaultPolicyOptions,
  cc: ResponseDirectives = responseDirectives(res.headers),
): Freshness {
  const h = res.headers;
  if (cc.sMaxage !== undefined) return { lifetime: cc.sMaxage, source: 's-maxage' };
  if (cc.maxAge !== undefined) return { lifetime: cc.maxAge, source: 'max-age' };
  // RFC 9213 2.2: a targeted field replaces Expires as well as Cache-Control.
  if (!cc.targeted && h['expires'] !== undefined) {
    // RFC 9111 5.3: several Expires values or an invalid date (e.g. "0") mean already expired.
    if (isRepeated(h, 'expires')) return { lifetime: 0, source: 'expires' };
    const expires = parseHttpDate(headerValue(h, 'expires'));
    if (Number.isNaN(expires)) return { lifetime: 0, source: 'expires' };
    let date = parseHttpDate(headerValue(h, 'date'));
    if (Number.isNaN(date)) date = res.responseTime ?? Date.now();
    return { lifetime: Math.max(0, Math.floor((expires - date) / 1000)), source: 'expires' };
  }
  if (res.status === 200 && opts.defaultTtl > 0) return { lifetime: opts.defaultTtl, source: 'default-ttl' };
  if (isNegativeStatus(res.status, opts)) return { lifetime: opts.negativeTtl, source: 'negative-ttl' };
  if (CACHEABLE_BY_DEFAULT.has(res.status) || cc.public) {
    const lm = parseHttpDate(headerValue(h, 'last-modified'));
    if (!Number.isNaN(lm)) {
      let date = parseHttpDate(headerValue(h, 'date'));
      if (Number.isNaN(date)) date = res.responseTime ?? Date.now();
      if (date > lm) {
        const lifetime = Math.min(opts.heuristicMax, Math.floor(((date - lm) / 1000) * opts.heuristicFraction));
        return { lifetime: Math.max(0, lifetime), source: 'heuristic' };
      }
    }
  }
  return { lifetime: 0, source: 'none' };
}

/** Freshness lifetime in seconds (see `freshness`). */
export function freshnessLifetime(
  res: ResponseLike & { responseTime?: number },
  opts: CachePolicyOptions = defaultPolicyOptions,
  cc?: ResponseDirectives,
): number {
  return freshness(res, opts, cc).lifetime;
}

export interface AgeMeta {
  headers: HeaderMap;
  /** When the request was sent (RFC 9111 request_time), epoch ms. */
  requestTime: number;
  /** When the response was received (RFC 9111 response_time), epoch ms. */
  cachedAt: number;
}

/** RFC 9111 1.2.2: a delta-seconds value too large to represent counts as 2^31. */
const DELTA_MAX = 2147483648;

/**
 * Age in seconds (RFC 9111 5.1). Of a list (one line "5, 7" or repeated lines) the first member
 * counts; a value that is not a non-negative integer is ignored (0); one beyond 2^31 is 2^31, so
 * an object claiming to be that old is never fresh.
 */
function ageValue(headers: HeaderMap): number {
  const v = headers['age'];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return 0;
  const len = s.length;
  let i = 0;
  while (i < len && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  const start = i;
  let n = 0;
  for (; i < len; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    n = Math.min(DELTA_MAX, n * 10 + c);
  }
  if (i === start) return 0;
  while (i < len && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  return i === len || s.charCodeAt(i) === 44 ? n : 0;
}

/** corrected_initial_age of RFC 9111 4.2.3, in seconds. */
export function initialAge(meta: AgeMeta): number {
  let date = parseHttpDate(headerValue(meta.headers, 'date'));
  if (Number.isNaN(date)) date = meta.cachedAt;
  const apparentAge = Math.max(0, (meta.cachedAt - date) / 1000);
  const responseDelay = Math.max(0, (meta.cachedAt - meta.requestTime) / 1000);
  const correctedAgeValue = ageValue(meta.headers) + responseDelay;
  return Math.max(apparentAge, correctedAgeValue);
}

/** current_age of RFC 9111 4.2.3 in (fractional) seconds: corrected initial age + resident time. */
export function currentAge(meta: AgeMeta, now: number): number {
  return initialAge(meta) + Math.max(0, (now - meta.cachedAt) / 1000);
}

/** The Age header value to send (RFC 9111 5.1): whole seconds, capped at 2^31. */
export function ageHeaderValue(seconds: number): string {
  if (!(seconds > 0)) return '0';
  return String(Math.min(DELTA_MAX, Math.floor(seconds)));
}

/** True when the response forbids serving it stale in a shared cache (RFC 9111 5.2.2.2, 5.2.2.8, 5.2.2.10). */
export function forbidsStale(cc: CacheDirectives): boolean {
  return cc.mustRevalidate || cc.proxyRevalidate || cc.sMaxage !== undefined;
}

export interface EntryTimes {
  /** Epoch ms when the entry becomes stale. */
  staleAt: number;
  /** Epoch ms after which the store may drop it. */
  deleteAt: number;
  lifetime: number;
  source: FreshnessSource;
}

/**
 * Absolute times for a stored response. staleAt = response_time + lifetime - initial age.
 * deleteAt keeps the entry for the longest of stale-while-revalidate and stale-if-error
 * (RFC 5861; not when must-revalidate / proxy-revalidate / s-maxage forbid serving stale) and opts.keep
 * when a validator makes a cheap conditional revalidation possible.
 */
export function computeTimes(
  res: ResponseLike,
  meta: { requestTime: number; cachedAt: number },
  opts: CachePolicyOptions = defaultPolicyOptions,
  cc: ResponseDirectives = responseDirectives(res.headers),
): EntryTimes {
  const f = freshness({ status: res.status, headers: res.headers, responseTime: meta.cachedAt }, opts, cc);
  const age = initialAge({ headers: res.headers, requestTime: meta.requestTime, cachedAt: meta.cachedAt });
  const staleAt = meta.cachedAt + Math.max(0, f.lifetime - age) * 1000;
  let extra = 0;
  if (!forbidsStale(cc)) extra = Math.max(cc.staleWhileRevalidate ?? 0, cc.staleIfError ?? 0);
  if (hasValidator(res.headers)) extra = Math.max(extra, opts.keep);
  return { staleAt: Math.round(staleAt), deleteAt: Math.round(staleAt + extra * 1000), lifetime: f.lifetime, source: f.source };
}
