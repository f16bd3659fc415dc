// Status-code classes the caching rules depend on.

/** RFC 9110 15.1: heuristically cacheable ("cacheable by default") status codes. */
export const CACHEABLE_BY_DEFAULT: ReadonlySet<number> = new Set([200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]);

/**
 * Error statuses that receive `negativeTtl` when the origin gave no freshness: absent resources
 * (404, 410), which are heuristically cacheable (RFC 9110 15.1), so the default keeps the RFC
 * behaviour. 4xx answers that depend on the client's request or credentials (400, 401, 403,
 * 429 ...) are left out on purpose.
 */
const NEGATIVE_STATUSES: ReadonlySet<number> = new Set([404, 410]);

/**
 * Gateway errors an operator may opt into negative caching (negativeServerErrors): they are not
 * cacheable by default, but a short negative cache shields a failing origin from a flood of
 * identical misses.
 */
const NEGATIVE_SERVER_ERRORS: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** Does `negativeTtl` apply to this status under these options? */
export function isNegativeStatus(status: number, opts: { negativeTtl: number; negativeServerErrors: boolean }): boolean {
  if (opts.negativeTtl <= 0) return false;
  return NEGATIVE_STATUSES.has(status) || (opts.negativeServerErrors && NEGATIVE_SERVER_ERRORS.has(status));
}

/**
 * Final status codes this cache understands (RFC 9111 3, "the cache understands the response
 * status code"): the ones registered by RFC 9110 whose semantics allow storing. 304 is not
 * stored as a response of its own (it freshens a stored one, RFC 9111 4.3.4).
 */
const UNDERSTOOD: ReadonlySet<number> = new Set([
  200, 203, 204, 206, 300, 301, 302, 303, 307, 308,
  400, 403, 404, 405, 406, 410, 411, 413, 414, 415, 416, 421, 422, 429,
  500, 501, 502, 503, 504, 505,
]);

export function isUnderstoodStatus(status: number): boolean {
  return UNDERSTOOD.has(status);
}

/** RFC 5861 4: the error answers for which stale-if-error lets a stale response be used. */
export function isServerErrorForStale(status: number): boolean {
  return status === 500 || status === 502 || status === 503 || status === 504;
}
