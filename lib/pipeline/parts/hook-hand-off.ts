// Coalescing behind the hook across the node: a hooked request whose cache key another worker
// owns (hash balance, by the hook's cacheKey) is handed to that worker with the redefinition the
// hook gave, so the owner neither calls the hook again nor keys the request differently, and
// every client mapped to one cacheKey joins the owner's one origin fetch. Only what the owner
// acts on travels (key, TTL, result, the origin request's URL and fields): the header edits are
// already in the request the owner receives, and an answer's vhost can only name the serving host
// (hook.ts, ownAnswer). Trusted on the internal port only (receive), like the other sibling marks.
import type { HookRedefinition } from '../../hook/answer.js';
import { isCacheResult } from '../../cache/policy/results.js';

interface Wire {
  k?: string | undefined;
  t?: number | undefined;
  r?: string | undefined;
  u?: string | undefined;
  h?: Array<{ key: string; value: string }>;
}

/** The owner's part of a redefinition, as one header value (base64url JSON: any field bytes). */
export function hookedValue(hook: HookRedefinition): string {
  const o = hook.originRequest;
  const w: Wire = { k: hook.cacheKey ?? undefined, t: hook.cacheTtl, r: hook.cacheResult, u: o?.url, h: o?.headers };
  return Buffer.from(JSON.stringify(w)).toString('base64url');
}

/** The redefinition a sibling sent; undefined when the value is not one of ours. */
export function hookedFrom(value: string): HookRedefinition | undefined {
  let w: Wire;
  try {
    w = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Wire;
  } catch {
    return undefined;
  }
  if (typeof w !== 'object' || w === null) return undefined;
  const headers = Array.isArray(w.h) ? w.h : [];
  return {
    end: undefined,
    headerEdits: [],
    cacheKey: typeof w.k === 'string' ? w.k : undefined,
    cacheTtl: typeof w.t === 'number' ? w.t : undefined,
    cacheResult: isCacheResult(w.r) ? w.r : undefined,
    vhost: undefined,
    originRequest: w.u === undefined && headers.length === 0 ? undefined : { method: 'GET', url: w.u, body: undefined, headers },
    fields: {},
  };
}
