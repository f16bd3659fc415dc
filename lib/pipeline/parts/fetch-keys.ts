// The keys of fetches in flight and what shapes a stored variant's key: shared by the fetch step
// (fetch.ts), the cache stage (lookup.ts) and the piece fetches (pieces.ts, piece-fetch.ts).
import type { CacheKey } from '../../cache/store.js';

/** Client fields that must not shape the object the cache stores for everyone. */
const CLIENT_CONDITIONALS = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range', 'range'];

/** Removes CLIENT_CONDITIONALS from an origin request's fields (most requests carry none). */
export function dropClientConditionals(headers: Record<string, unknown>): void {
  for (let i = 0; i < CLIENT_CONDITIONALS.length; i++) {
    const name = CLIENT_CONDITIONALS[i]!;
    if (headers[name] !== undefined) delete headers[name];
  }
}

export function keyString(key: CacheKey): string {
  return `${key.vhost}\n${key.url}`;
}

/** The fetch of a refresh: joined only by refreshes of the same stored variant. */
export function refreshKey(key: CacheKey, variantKey: string, purged: boolean): string {
  return `${key.vhost}\n${key.url}\n\u0001${purged ? 'P' : 'R'}${variantKey}`;
}

/**
 * cachingKey.headers key the stored variants as if the origin had named them in Vary (the
 * answer's own Vary is sent unchanged); `*` stays alone, it matches nothing anyway.
 */
export function withKeyHeaders(vary: string[], keyHeaders: readonly string[] | undefined): string[] {
  if (keyHeaders === undefined || keyHeaders.length === 0 || vary[0] === '*') return vary;
  const out = [...vary];
  for (const h of keyHeaders) if (!out.includes(h)) out.push(h);
  return out;
}
