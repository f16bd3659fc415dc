// Operator knobs of the caching rules. All durations are seconds.

export interface CachePolicyOptions {
  /** Lifetime given to 200 responses without explicit freshness (replaces the Last-Modified heuristic); 0 = off. */
  defaultTtl: number;
  /** Lifetime given to the negative statuses (see NEGATIVE_STATUSES) without explicit freshness; 0 = off. */
  negativeTtl: number;
  /** true: 500, 502, 503 and 504 get negativeTtl too (not cacheable by default, RFC 9110 15.1). */
  negativeServerErrors: boolean;
  /** Share of (Date - Last-Modified) used as heuristic lifetime (RFC 9111 4.2.2 suggests 10%). */
  heuristicFraction: number;
  /** Upper bound of a heuristic lifetime. */
  heuristicMax: number;
  /** How long a stale entry that has a validator is kept for conditional revalidation. */
  keep: number;
  /** false: the origin's `no-cache` response directive is treated as absent. */
  honourNoCache: boolean;
  /** false: the origin's `private` response directive is treated as absent. */
  honourPrivate: boolean;
  /**
   * true: Set-Cookie is stored with the response and sent with every hit. false (default): the
   * shared copy is stored without it; only the client whose request fetched it gets the cookie.
   */
  storeSetCookie: boolean;
}

export const defaultPolicyOptions: Readonly<CachePolicyOptions> = Object.freeze({
  defaultTtl: 0,
  negativeTtl: 10,
  negativeServerErrors: false,
  heuristicFraction: 0.1,
  heuristicMax: 86400,
  keep: 3600,
  honourNoCache: true,
  honourPrivate: true,
  storeSetCookie: false,
});
