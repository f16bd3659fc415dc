// Can a stored response answer this request? RFC 9111 4.2.4, 5.2.1, 5.2.2 and RFC 5861.
import { requestDirectives, type CacheDirectives, type ResponseDirectives } from './cache-control.js';
import { responseDirectives } from './cdn-cache-control.js';
import { type HeaderMap } from './headers.js';
import { currentAge, forbidsStale } from './freshness.js';
import { defaultPolicyOptions, type CachePolicyOptions } from './options.js';
import { isServerErrorForStale } from './status.js';

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
