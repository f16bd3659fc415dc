// The caching rules that need the request as the origin sees it, or a stored entry's shape:
// variant selection (Vary over the forwarded fields), storability, the validators of a refresh.
// The freshness decision itself is lib/cache/policy/freshness.ts, the fields stored and the 304
// merge lib/cache/policy/not-modified.ts, which the stages call.
import type { IncomingHttpHeaders } from 'node:http';
import {
  buildRevalidationHeaders, encodingAcceptable, evaluateConditional, needsEncodingCheck, isStorable, responseDirectives, variantKey,
  varyHeaders, type CachePolicyOptions, type HeaderMap, type ResponseDirectives,
} from '../../cache/policy/index.js';
import { connectionLists, isHopByHop } from '../../http/hop-by-hop.js';
import type { CacheEntryMeta, StoredHeaders } from '../../cache/store.js';

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

export function storableResponse(method: string, reqHeaders: IncomingHttpHeaders, status: number, headers: StoredHeaders, opts: CachePolicyOptions): boolean {
  return isStorable({ method, headers: reqHeaders as HeaderMap }, { status, headers }, opts) === true;
}

/**
 * storableResponse that hands back the answer's directives when it may be stored (undefined
 * when not), so that the meta of the new object (newEntryMeta) does not parse them again.
 */
export function storableDirectives(method: string, reqHeaders: IncomingHttpHeaders, status: number, headers: StoredHeaders,
  opts: CachePolicyOptions): ResponseDirectives | undefined {
  const cc = responseDirectives(headers);
  return isStorable({ method, headers: reqHeaders as HeaderMap }, { status, headers }, opts, cc) === true ? cc : undefined;
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

/** Validators for a conditional refresh, or undefined when the copy has none. */
export function revalidationHeaders(headers: StoredHeaders): Record<string, string> | undefined {
  const v = buildRevalidationHeaders(headers);
  return v['if-none-match'] === undefined && v['if-modified-since'] === undefined ? undefined : v as Record<string, string>;
}
