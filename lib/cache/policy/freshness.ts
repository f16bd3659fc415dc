// The freshness decision of the cache, in one place (RFC 9111 4.2, 4.2.4, 5.2.1, 5.2.2; RFC 5861):
// how long a stored response is fresh (its lifetime, age and absolute times), whether it is fresh
// now, and whether it may answer this request (the request's directives, stale-while-revalidate,
// stale-if-error, only-if-cached). Time is an argument (`now`, epoch ms) read by the caller
// from its clock, so a test sets the time instead of waiting for it.
import { emptyDirectives, fieldsToStrip, requestDirectives, type CacheDirectives, type ResponseDirectives } from './cache-control.js';
import { responseDirectives } from './cdn-cache-control.js';
import { hasValidator, headerValue, isRepeated, parseHttpDate, type HeaderMap } from './headers.js';
import { defaultPolicyOptions, type CachePolicyOptions } from './options.js';
import { CACHEABLE_BY_DEFAULT, isNegativeStatus, isServerErrorForStale } from './status.js';

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

/** A stored entry as far as these rules need it (a CacheEntryMeta fits). */
export interface EntryLike {
  status: number;
  headers: HeaderMap;
  requestTime: number;
  cachedAt: number;
  staleAt: number;
}

export type RequestEvaluation =
  /** Fresh and acceptable to the client: serve it (TCP_HIT). */
  | 'fresh'
  /** Stale, but the client allowed it with max-stale: serve it. */
  | 'stale-ok'
  /** Stale within stale-while-revalidate: serve it and refresh in the background. */
  | 'stale-while-revalidate'
  /** The response's own rules require validation with the origin (stale, or no-cache). */
  | 'revalidate'
  /** The client's no-cache / max-age / min-fresh asked for a response from the origin. */
  | 'client-revalidate'
  /** only-if-cached and nothing usable: answer 504 (RFC 9111 5.2.1.7). */
  | 'only-if-cached-miss';

/** `no-cache` as applied: the operator may tell us to ignore the origin's (opts.honourNoCache). */
function responseNoCache(cc: CacheDirectives, opts: CachePolicyOptions): true | string[] | undefined {
  return opts.honourNoCache ? cc.noCache : undefined;
}

/**
 * Decides how a stored entry may answer a request. Freshness is the entry's staleAt (so an
 * operator "expire" takes effect); age is RFC 9111 4.2.3 current_age.
 *
 * - client no-cache (or Pragma: no-cache without Cache-Control), or an age/remaining freshness
 *   outside the client's max-age / min-fresh: 'client-revalidate' (RFC 9111 5.2.1.1, 5.2.1.3, 5.2.1.4);
 * - response no-cache without field names: always 'revalidate' (5.2.2.4); with field names the
 *   entry is usable without those fields (see `fieldsToStrip`);
 * - stale: the stale-while-revalidate window (RFC 5861 3), then the client's max-stale
 *   (5.2.1.2), unless must-revalidate / proxy-revalidate / s-maxage forbid stale (5.2.2.2,
 *   5.2.2.8, 5.2.2.10). s-maxage carries the semantics of proxy-revalidate for a shared cache,
 *   and RFC 9111 4.2.4 forbids generating a stale response against "an applicable s-maxage or
 *   proxy-revalidate", so stale-while-revalidate and stale-if-error do not apply beside it.
 * - only-if-cached turns every outcome that needs the origin into 'only-if-cached-miss'.
 *
 * A request no-store does not stop serving a stored response; it stops storing (see isStorable).
 * `req`: the request's directives when the caller parsed them already.
 */
export function evaluateRequest(
  reqHeaders: HeaderMap,
  entry: EntryLike,
  now: number,
  opts: CachePolicyOptions = defaultPolicyOptions,
  resCc: ResponseDirectives = responseDirectives(entry.headers),
  req: CacheDirectives = requestDirectives(reqHeaders),
): RequestEvaluation {
  const r = decide(req, resCc, entry, now, opts);
  if (req.onlyIfCached && (r === 'revalidate' || r === 'client-revalidate')) return 'only-if-cached-miss';
  return r;
}

function decide(req: CacheDirectives, res: ResponseDirectives, entry: EntryLike, now: number, opts: CachePolicyOptions): RequestEvaluation {
  if (req.noCache !== undefined) return 'client-revalidate';
  // The age (a Date parse) only matters to a client that sent max-age.
  if (req.maxAge !== undefined && currentAge(entry, now) > req.maxAge) return 'client-revalidate';
  if (responseNoCache(res, opts) === true) return 'revalidate';
  const remaining = (entry.staleAt - now) / 1000;
  if (remaining > 0) {
    if (req.minFresh !== undefined && remaining < req.minFresh) return 'client-revalidate';
    return 'fresh';
  }
  const staleness = -remaining;
  if (forbidsStale(res)) return 'revalidate';
  if (res.staleWhileRevalidate !== undefined && staleness <= res.staleWhileRevalidate) return 'stale-while-revalidate';
  if (req.maxStale !== undefined) {
    if (req.maxStale === true || staleness <= req.maxStale) return 'stale-ok';
  }
  return 'revalidate';
}

/** True while a stale entry may be served as the origin is asked in the background (RFC 5861 3). */
export function withinStaleWhileRevalidate(
  entry: EntryLike,
  now: number,
  resCc: ResponseDirectives = responseDirectives(entry.headers),
): boolean {
  if (forbidsStale(resCc) || resCc.staleWhileRevalidate === undefined) return false;
  const staleness = (now - entry.staleAt) / 1000;
  return staleness > 0 ? staleness <= resCc.staleWhileRevalidate : true;
}

/**
 * True when a stale entry may answer instead of an origin failure (RFC 5861 4): the origin is
 * unreachable (`failure` = 'network') or answered 500/502/503/504, and the entry is within the
 * stale-if-error window of the response or of the request (a client may ask for it too).
 * must-revalidate / proxy-revalidate / s-maxage forbid it (RFC 9111 5.2.2.2, 4.2.4: an error is
 * due instead).
 */
export function staleIfErrorAllowed(
  reqHeaders: HeaderMap,
  entry: EntryLike,
  now: number,
  failure: 'network' | number,
  resCc: ResponseDirectives = responseDirectives(entry.headers),
): boolean {
  if (failure !== 'network' && !isServerErrorForStale(failure)) return false;
  if (forbidsStale(resCc)) return false;
  const staleness = Math.max(0, (now - entry.staleAt) / 1000);
  const reqWindow = requestDirectives(reqHeaders).staleIfError;
  const window = Math.max(resCc.staleIfError ?? -1, reqWindow ?? -1);
  return window >= 0 && staleness <= window;
}

/** What the request's Cache-Control (and Pragma) asks of the cache, parsed once per request. */
export interface RequestControl {
  noStore: boolean;
  noCache: boolean;
  onlyIfCached: boolean;
  directives: Readonly<CacheDirectives>;
}

export function requestControl(headers: HeaderMap): RequestControl {
  // Most requests carry neither field: skip the parse then.
  if (headers['cache-control'] === undefined && headers.pragma === undefined) return NO_CONTROL;
  const d = requestDirectives(headers);
  return { noStore: d.noStore === true, noCache: d.noCache !== undefined, onlyIfCached: d.onlyIfCached === true, directives: d };
}
const NO_CONTROL: RequestControl = Object.freeze({ noStore: false, noCache: false, onlyIfCached: false, directives: Object.freeze(emptyDirectives()) });

export type Decision =
  | { kind: 'fresh'; strip?: readonly string[] }
  | { kind: 'stale-while-revalidate' }
  /** `client`: the client's no-cache / max-age / min-fresh asked for it (TCP_CLIENT_REFRESH_MISS). */
  | { kind: 'refresh'; client: boolean }
  | { kind: 'unusable' };

/**
 * How a stored entry may answer this request at `now`: fresh (possibly without the fields a
 * `no-cache="..."` names), stale within stale-while-revalidate, it needs the origin first, or
 * (only-if-cached) it may not answer at all. An operator purge or expire (`invalidated`) always
 * needs the origin. `cc`, `namedFields`: the entry's directives and the fields they name, when
 * the caller keeps them parsed beside the entry.
 */
export function freshnessDecision(entry: EntryLike & { invalidated?: number }, reqHeaders: HeaderMap, control: RequestControl, now: number,
  opts: CachePolicyOptions, cc: ResponseDirectives = responseDirectives(entry.headers), namedFields: readonly string[] = fieldsToStrip(cc)): Decision {
  if (entry.invalidated) return control.onlyIfCached ? UNUSABLE : REFRESH;
  switch (evaluateRequest(reqHeaders, entry, now, opts, cc, control.directives)) {
    case 'fresh':
    case 'stale-ok':
      return opts.honourNoCache && namedFields.length > 0 ? { kind: 'fresh', strip: namedFields } : FRESH;
    case 'stale-while-revalidate': return SWR;
    case 'only-if-cached-miss': return UNUSABLE;
    case 'client-revalidate': return CLIENT_REFRESH;
    default: return REFRESH;
  }
}
const FRESH: Decision = { kind: 'fresh' };
const SWR: Decision = { kind: 'stale-while-revalidate' };
const REFRESH: Decision = { kind: 'refresh', client: false };
const CLIENT_REFRESH: Decision = { kind: 'refresh', client: true };
const UNUSABLE: Decision = { kind: 'unusable' };
