// RFC 9110 9.3.3 and RFC 9111 4: the answer to a POST may be stored and reused for later GETs
// of the same URI when it has explicit freshness and a Content-Location naming the POST's own
// target (the origin says "this is now the representation of that URI"). Most caches drop it;
// a shared cache that keeps it saves the GET that usually follows a form submission.
import { hasExplicitFreshness } from './freshness.js';
import { headerValue, type HeaderMap } from './headers.js';
import type { CachePolicyOptions } from './options.js';
import { isStorable } from './storable.js';

/**
 * Whether Content-Location, resolved against the request's URI (`requestUrl` origin-form or
 * absolute-form, `host` its Host), is that URI: same host, path and query. An absolute-form
 * target is compared by scheme too; an origin-form one does not tell its scheme.
 */
function contentLocationIsTarget(requestUrl: string, host: string, headers: HeaderMap): boolean {
  const v = headerValue(headers, 'content-location')?.trim();
  if (v === undefined || v === '' || Array.isArray(headers['content-location'])) return false;
  let base: URL;
  let u: URL;
  try {
    base = new URL(requestUrl, `http://${host}/`);
    u = new URL(v, base);
  } catch {
    return false;
  }
  const schemeKnown = requestUrl.charCodeAt(0) !== 47 /* / */;
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  if (schemeKnown && u.protocol !== base.protocol) return false;
  return u.host.toLowerCase() === base.host.toLowerCase() && u.pathname === base.pathname && u.search === base.search;
}

/**
 * The POST's answer may be stored as the target's GET representation: explicit freshness, a
 * Content-Location that is the target, and storable by every rule a GET's answer follows (the
 * POST's own Authorization and no-store count).
 */
export function postAnswerReusable(requestUrl: string, host: string, reqHeaders: HeaderMap, status: number,
  headers: HeaderMap, opts: CachePolicyOptions): boolean {
  if (!hasExplicitFreshness(headers) || !contentLocationIsTarget(requestUrl, host, headers)) return false;
  return isStorable({ method: 'GET', headers: reqHeaders }, { status, headers }, opts) === true;
}
