// The caching rules as the stages use them: thin bindings of lib/cache/policy (RFC 9111, 9110,
// 5861, 9213) to stored entries and transactions, so the stages read as decisions.
import type { IncomingHttpHeaders } from 'node:http';
import {
  buildRevalidationHeaders, computeTimes, emptyDirectives, encodingAcceptable, evaluateConditional, evaluateRange,
  forbidsStale, formatHttpDate, hitResult, needsEncodingCheck, notModifiedMatches, storableFields, invalidationTargets as policyInvalidationTargets, isStorable, mergeNotModified as policyMerge,
  multipartBoundary as policyBoundary, requestDirectives,
  staleIfErrorAllowed, evaluateRequest, variantKey, varyHeaders, type CacheDirectives, type CachePolicyOptions, type HeaderMap, type RangeResult,
} from '../../cache/policy/index.js';
import { connectionLists, isHopByHop } from '../../http/hop-by-hop.js';
import type { CacheEntryMeta, StoredHeaders } from '../../cache/store.js';
import type { CacheResult } from '../../cache/policy/results.js';
import { viewOf } from './stored-view.js';

export interface RequestControl {
  noStore: boolean;
  noCache: boolean;
  onlyIfCached: boolean;
  /** The request's Cache-Control (and Pragma) directives, parsed once. */
  directives: Readonly<CacheDirectives>;
}

export function requestControl(headers: IncomingHttpHeaders): RequestControl {
  // Most requests carry neither field: skip the parse then.
  if (headers['cache-control'] === undefined && headers.pragma === undefined) return NO_CONTROL;
  const d = requestDirectives(headers as HeaderMap);
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
 * How a stored entry may answer: fresh (possibly without the fields a `no-cache="..."` names),
 * stale within stale-while-revalidate, or it needs the origin first. An operator purge or
 * expire (invalidated) always needs the origin.
 */
export function freshnessDecision(entry: CacheEntryMeta, headers: IncomingHttpHeaders, control: RequestControl, now: number, opts: CachePolicyOptions): Decision {
  if (entry.invalidated) return control.onlyIfCached ? UNUSABLE : REFRESH;
  const view = viewOf(entry);
  switch (evaluateRequest(headers as HeaderMap, entry, now, opts, view.cc, control.directives)) {
    case 'fresh':
    case 'stale-ok': {
      const strip = view.namedFields;
      return opts.honourNoCache && strip.length > 0 ? { kind: 'fresh', strip } : FRESH;
    }
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

/** RFC 5861 4: may the stale entry stand in for a failed refresh (-1 = network failure)? */
export function staleIfErrorAllows(entry: CacheEntryMeta, reqHeaders: IncomingHttpHeaders, status: number, now: number): boolean {
  return staleIfErrorAllowed(reqHeaders as HeaderMap, entry, now, status === -1 ? 'network' : status);
}

/**
 * RFC 9111 5.2.2.2, 5.2.2.8, 5.2.2.10: must-revalidate, proxy-revalidate or s-maxage; a cache
 * that cannot reach the origin answers 504 rather than the stale copy.
 */
export function mustNotServeStale(entry: CacheEntryMeta): boolean {
  return forbidsStale(viewOf(entry).cc);
}

/**
 * Does a stored variant answer this request? Its Vary fields select the same variant key and,
 * for a content coding the key does not tell apart, the client accepts it (RFC 9110 12.5.3).
 */
export function variantMatches(meta: CacheEntryMeta, reqHeaders: IncomingHttpHeaders): boolean {
  // A stored 206 is a span of an object (pieces.ts), never a complete variant.
  if (meta.status === 206) return false;
  const vary = meta.vary;
  if (vary.length === 0) return true;
  if (vary[0] === '*') return false;
  const forwarded = asForwarded(vary, reqHeaders);
  if (variantKey(vary, forwarded as HeaderMap) !== meta.variantKey) return false;
  const ce = meta.headers['content-encoding'];
  return !needsEncodingCheck(ce) || !vary.includes('accept-encoding') || encodingAcceptable(forwarded['accept-encoding'], ce);
}

/**
 * The request's fields as the origin gets them, as far as the Vary fields go: hop-by-hop fields
 * and those the client names in Connection are stripped on the way (RFC 9110 7.6.1), so the
 * origin chose its answer without them and they must not key the variant. Keyed on the client's
 * copy, `Accept-Language: fr` + `Connection: accept-language` stored the default page as the fr
 * variant for everyone. The client's own object comes back unless a Vary field is such a field
 * and present: no allocation on a hit.
 */
function asForwarded(vary: readonly string[], headers: IncomingHttpHeaders): IncomingHttpHeaders {
  for (let k = 0; k < vary.length; k++) {
    const name = vary[k]!;
    if (headers[name] !== undefined && notForwarded(name, headers.connection)) return withoutUnforwarded(vary, headers);
  }
  return headers;
}

function notForwarded(name: string, connection: string | undefined): boolean {
  return isHopByHop(name) || (connection !== undefined && connectionLists(connection, name));
}

function withoutUnforwarded(vary: readonly string[], headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out = { ...headers };
  for (const name of vary) if (notForwarded(name, headers.connection)) delete out[name];
  return out;
}

/**
 * Fields of an origin response as stored: without those the cache must not keep (private="...",
 * no-cache="...") and with a Date when the origin sent none (RFC 9110 6.6.1: the time it was
 * received), so a later hit does not stamp the time of the hit.
 */
export function fieldsToStore(headers: StoredHeaders, receivedAt: number, opts: CachePolicyOptions): StoredHeaders {
  const out = storableFields(headers, opts);
  if (out.date !== undefined) return out;
  return { ...out, date: formatHttpDate(receivedAt) };
}

/** RFC 9111 4.3.4: does a 304 describe the stored copy (same validator)? */
export function notModifiedFits(entry: CacheEntryMeta, headersOf304: StoredHeaders): boolean {
  return notModifiedMatches(entry.headers, headersOf304);
}

export function storableResponse(method: string, reqHeaders: IncomingHttpHeaders, status: number, headers: StoredHeaders, opts: CachePolicyOptions): boolean {
  return isStorable({ method, headers: reqHeaders as HeaderMap }, { status, headers }, opts) === true;
}

export function entryTimes(status: number, headers: StoredHeaders, requestTime: number, cachedAt: number, opts: CachePolicyOptions): { staleAt: number; deleteAt: number } {
  return computeTimes({ status, headers }, { requestTime, cachedAt }, opts);
}

export function varyOf(headers: StoredHeaders): string[] {
  return headers.vary === undefined ? NO_VARY : varyHeaders(headers);
}
const NO_VARY: string[] = [];

/** The variant key of the request as forwarded to the origin (see asForwarded). */
export function variantOf(vary: readonly string[], reqHeaders: IncomingHttpHeaders): string {
  return vary.length === 0 ? '' : variantKey(vary, asForwarded(vary, reqHeaders) as HeaderMap);
}

export function conditionalResult(method: string, reqHeaders: IncomingHttpHeaders, status: number, headers: StoredHeaders): 'proceed' | 304 | 412 {
  if (reqHeaders['if-none-match'] === undefined && reqHeaders['if-modified-since'] === undefined &&
    reqHeaders['if-match'] === undefined && reqHeaders['if-unmodified-since'] === undefined) return 'proceed';
  return evaluateConditional(method, reqHeaders as HeaderMap, { status, headers });
}

export function rangeOf(method: string, reqHeaders: IncomingHttpHeaders, status: number, headers: StoredHeaders, size: number): RangeResult {
  return evaluateRange(method, reqHeaders as HeaderMap, { status, headers }, size);
}

export const multipartBoundary = policyBoundary;

/** Validators for a conditional refresh, or undefined when the copy has none. */
export function revalidationHeaders(headers: StoredHeaders): Record<string, string> | undefined {
  const v = buildRevalidationHeaders(headers);
  return v['if-none-match'] === undefined && v['if-modified-since'] === undefined ? undefined : v as Record<string, string>;
}

/** The stored entry's new fields and times after a 304 (RFC 9111 4.3.4). */
export function mergeNotModified(entry: CacheEntryMeta, headersOf304: StoredHeaders, requestTime: number, cachedAt: number, opts: CachePolicyOptions):
  Pick<CacheEntryMeta, 'headers' | 'requestTime' | 'cachedAt' | 'staleAt' | 'deleteAt' | 'invalidated'> {
  // The 304 is a message received now: without a Date it gets one (RFC 9110 6.6.1), which also
  // keeps Age right since requestTime / cachedAt restart with the revalidation.
  const headers = fieldsToStore(policyMerge(entry.headers, headersOf304), cachedAt, opts);
  const times = computeTimes({ status: entry.status, headers }, { requestTime, cachedAt }, opts);
  return { headers, requestTime, cachedAt, staleAt: times.staleAt, deleteAt: times.deleteAt, invalidated: 0 };
}

export function cacheResultForHit(status: number): CacheResult {
  return hitResult(status);
}

export function invalidationTargets(method: string, status: number, url: string, headers: StoredHeaders, host: string): string[] {
  return policyInvalidationTargets(method, status, url, headers, host);
}
