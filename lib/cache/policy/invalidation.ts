// Invalidation after unsafe requests (RFC 9111 4.4).
import { headerValue, type HeaderMap } from './headers.js';

/** Methods known to be safe (RFC 9110 9.2.1); every other method, known or not, is unsafe. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method.toUpperCase());
}

/**
 * Request targets (path + query, as cache keys hold them) to invalidate after an unsafe request
 * got a non-error answer (2xx / 3xx): the target URI, plus Location and Content-Location when they
 * have the same origin as the target (RFC 9111 4.4: a cache MUST NOT invalidate other origins,
 * which would let one site evict another's content). `requestUrl` is the request target
 * (origin-form or absolute-form); `host` the Host of the request.
 */
export function invalidationTargets(method: string, status: number, requestUrl: string, resHeaders: HeaderMap, host: string): string[] {
  if (isSafeMethod(method) || status < 200 || status > 399) return [];
  let base: URL;
  try {
    base = new URL(requestUrl, `http://${host}/`);
  } catch {
    return [];
  }
  const targetHost = base.host.toLowerCase();
  // An origin-form target does not tell the scheme; only an absolute-form one is compared by scheme.
  const schemeKnown = requestUrl.charCodeAt(0) !== 47 /* / */;
  const out = [base.pathname + base.search];
  for (const name of ['location', 'content-location']) {
    const v = headerValue(resHeaders, name);
    if (v === undefined || v.trim().length === 0) continue;
    let u: URL;
    try {
      u = new URL(v.trim(), base);
    } catch {
      continue;
    }
    if (u.host.toLowerCase() !== targetHost || (u.protocol !== 'http:' && u.protocol !== 'https:')) continue;
    if (schemeKnown && u.protocol !== base.protocol) continue;
    const target = u.pathname + u.search;
    if (!out.includes(target)) out.push(target);
  }
  return out;
}
