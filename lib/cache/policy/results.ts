// Cache result codes recorded per transaction (access log, statistics).

export const CACHE_RESULTS = [
  /** A fresh stored response answered the request. */
  'TCP_HIT',
  /** The client's conditional request (If-None-Match / If-Modified-Since) was answered 304 from the cache. */
  'TCP_IMS_HIT',
  /** A stale entry was revalidated: the origin answered 304 and the stored body was served. */
  'TCP_REFRESH_HIT',
  /** Refreshing a stale entry failed (origin unreachable or 5xx) so the stale content was served. */
  'TCP_REF_FAIL_HIT',
  /** A cached error response (negative caching, e.g. a 404 kept for negativeTtl) was served. */
  'TCP_NEGATIVE_HIT',
  /** A cached redirect (301, 302, 307, 308 ...) was served. */
  'TCP_REDIRECT_HIT',
  /** Nothing usable in the cache: fetched from the origin. */
  'TCP_MISS',
  /** A stale entry was re-fetched and the origin sent a new full response (200). */
  'TCP_REFRESH_MISS',
  /** The client's no-cache (or max-age / min-fresh) forced a fetch from the origin. */
  'TCP_CLIENT_REFRESH_MISS',
  /** Refused by access control. */
  'TCP_DENIED',
  /** The transaction failed (origin error without a stale fallback, internal error). */
  'TCP_ERROR',
  /** No cache lookup took place (e.g. management or non-cacheable methods passed through). */
  'TCP_NONE',
  /** Refused by rate limiting. */
  'TCP_RATE_LIMITED',
  /** The external hook ended the transaction (document 3). */
  'TCP_DENY',
] as const;

export type CacheResult = (typeof CACHE_RESULTS)[number];

/** The results where a stored response answered (statistics' hit sums, Cache-Status `hit`). */
export const HIT_RESULTS = ['TCP_HIT', 'TCP_IMS_HIT', 'TCP_REFRESH_HIT', 'TCP_REF_FAIL_HIT', 'TCP_NEGATIVE_HIT', 'TCP_REDIRECT_HIT'] as const satisfies readonly CacheResult[];

const HIT_SET: ReadonlySet<CacheResult> = new Set(HIT_RESULTS);

export function isHitResult(r: CacheResult | undefined): boolean {
  return r !== undefined && HIT_SET.has(r);
}

export const TCP_HIT: CacheResult = 'TCP_HIT';
export const TCP_IMS_HIT: CacheResult = 'TCP_IMS_HIT';
export const TCP_REFRESH_HIT: CacheResult = 'TCP_REFRESH_HIT';
export const TCP_REF_FAIL_HIT: CacheResult = 'TCP_REF_FAIL_HIT';
export const TCP_NEGATIVE_HIT: CacheResult = 'TCP_NEGATIVE_HIT';
export const TCP_REDIRECT_HIT: CacheResult = 'TCP_REDIRECT_HIT';
export const TCP_MISS: CacheResult = 'TCP_MISS';
export const TCP_REFRESH_MISS: CacheResult = 'TCP_REFRESH_MISS';
export const TCP_CLIENT_REFRESH_MISS: CacheResult = 'TCP_CLIENT_REFRESH_MISS';
export const TCP_DENIED: CacheResult = 'TCP_DENIED';
export const TCP_ERROR: CacheResult = 'TCP_ERROR';
export const TCP_NONE: CacheResult = 'TCP_NONE';
export const TCP_RATE_LIMITED: CacheResult = 'TCP_RATE_LIMITED';
export const TCP_DENY: CacheResult = 'TCP_DENY';

/** Position of each result in CACHE_RESULTS (per-result counters index by it, no search). */
export const CACHE_RESULT_INDEX: Readonly<Record<CacheResult, number>> =
  Object.fromEntries(CACHE_RESULTS.map((r, i) => [r, i])) as Record<CacheResult, number>;

export function isCacheResult(s: unknown): s is CacheResult {
  return (CACHE_RESULTS as readonly unknown[]).includes(s);
}

/** The HIT flavour of a stored response served as is: redirects and errors are counted apart. */
export function hitResult(status: number): CacheResult {
  if (status >= 400) return TCP_NEGATIVE_HIT;
  if (status >= 300 && status < 400 && status !== 304) return TCP_REDIRECT_HIT;
  return TCP_HIT;
}
