// May a shared cache store this response? RFC 9111 3, 3.5 and 5.2.
import { parseCacheControl, type ResponseDirectives } from './cache-control.js';
import { responseDirectives } from './cdn-cache-control.js';
import { hasValidator, type HeaderMap } from './headers.js';
import { defaultPolicyOptions, type CachePolicyOptions } from './options.js';
import { CACHEABLE_BY_DEFAULT, isNegativeStatus, isUnderstoodStatus } from './status.js';
import { hasExplicitFreshness } from './freshness.js';
import { varyHeaders } from './vary.js';

export type NotStorableReason =
  | 'method'        // only GET responses are stored; HEAD responses may only freshen (RFC 9111 4.3.5)
  | 'status'        // not final, not understood, or 304
  | 'partial'       // 206: the store holds complete representations only (RFC 9111 3.3 makes it optional)
  | 'no-store'      // request or response no-store (RFC 9111 5.2.1.5, 5.2.2.5)
  | 'private'       // private without field names (RFC 9111 5.2.2.7)
  | 'authorization' // RFC 9111 3.5
  | 'vary-star'     // Vary: * never matches a later request (RFC 9111 4.1)
  | 'no-freshness'; // nothing makes it reusable: no freshness, no validator, not public

export interface RequestLike {
  method: string;
  headers: HeaderMap;
}

export interface StoredResponseLike {
  status: number;
  headers: HeaderMap;
}

/**
 * RFC 9111 3: true when the response may be stored, else the first rule that forbids it.
 * `no-cache` responses are storable (they are revalidated on every use).
 */
export function isStorable(
  req: RequestLike,
  res: StoredResponseLike,
  opts: CachePolicyOptions = defaultPolicyOptions,
  cc: ResponseDirectives = responseDirectives(res.headers),
): true | NotStorableReason {
  const method = req.method.toUpperCase();
  if (method !== 'GET') return 'method';
  const status = res.status;
  if (status === 206) return 'partial';
  // RFC 9111 3: understanding the status is required only for 206 and 304 (a 304 freshens a
  // stored response, 4.3.4, and is never stored itself) and under must-understand. Any other
  // final status is stored by the rules below: with explicit freshness (or public), a status
  // this cache does not know (299, 499, 599) is reused like any other; without, it is not
  // heuristically cacheable and is not stored.
  if (status === 304 || status < 200) return 'status';
  if (cc.mustUnderstand && !isUnderstoodStatus(status)) return 'status';
  // RFC 9111 5.2.2.3: must-understand overrides no-store when the status is understood.
  if (cc.noStore && !cc.mustUnderstand) return 'no-store';
  // Most requests carry no Cache-Control: nothing to parse then.
  const reqCc = req.headers['cache-control'];
  if (reqCc !== undefined && parseCacheControl(reqCc).noStore) return 'no-store';
  if (cc.private === true && opts.honourPrivate) return 'private';
  if (req.headers['authorization'] !== undefined && !cc.public && !cc.mustRevalidate && cc.sMaxage === undefined) {
    return 'authorization';
  }
  const vary = res.headers['vary'];
  if (vary !== undefined && varyHeaders(res.headers)[0] === '*') return 'vary-star';
  if (hasExplicitFreshness(res.headers, cc)) return true;
  if (status === 200 && opts.defaultTtl > 0) return true;
  if (isNegativeStatus(status, opts)) return true;
  // Heuristically cacheable or public: storable, but only worth it when it can be reused, i.e.
  // it has a validator for revalidation (or public, which the origin asked us to cache).
  if (cc.public) return true;
  if (CACHEABLE_BY_DEFAULT.has(status) && hasValidator(res.headers)) return true;
  return 'no-freshness';
}

/**
 * Header fields this shared cache does not store: those named by `private="..."` (RFC 9111
 * 5.2.2.7: MUST NOT store) and by `no-cache="..."` (5.2.2.4: MUST NOT send without revalidation;
 * not storing them is the safe way to honour that for every later client, coalesced or served
 * stale). The storing stage and the 304 merge remove them; only the client whose request
 * fetched the response gets them.
 */
export function fieldsNotToStore(cc: ResponseDirectives, opts: CachePolicyOptions = defaultPolicyOptions): string[] {
  const priv = opts.honourPrivate && Array.isArray(cc.private) ? cc.private : NONE;
  const noCache = opts.honourNoCache && Array.isArray(cc.noCache) ? cc.noCache : NONE;
  if (noCache.length === 0) return priv;
  if (priv.length === 0) return noCache;
  return [...priv, ...noCache.filter((n) => !priv.includes(n))];
}
const NONE: string[] = [];

/**
 * The headers without the fields of `fieldsNotToStore`, and without Set-Cookie unless the
 * operator keeps it (`storeSetCookie`): a cookie is one client's state, and a shared copy that
 * keeps it hands one visitor's session to every later one. The same object when nothing goes.
 */
export function storableFields<H extends HeaderMap>(headers: H, opts: CachePolicyOptions = defaultPolicyOptions,
  cc: ResponseDirectives = responseDirectives(headers)): H {
  const drop = fieldsNotToStore(cc, opts);
  const dropCookie = !opts.storeSetCookie && headers['set-cookie'] !== undefined;
  if (drop.length === 0 && !dropCookie) return headers;
  // A new object of the fields kept rather than a copy less some (delete): an object a field was
  // deleted from turns into a hash table (V8's dictionary mode), about three times the size, and
  // a stored copy keeps its fields for as long as it is held.
  const out: HeaderMap = {};
  for (const name of Object.keys(headers)) {
    if ((dropCookie && name === 'set-cookie') || drop.includes(name)) continue;
    out[name] = headers[name];
  }
  return out as H;
}
