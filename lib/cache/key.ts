// The cache key of a request URL (functions.network.cache.cachingKey): which parts of the query
// string count, in what order, and whether case does. One function serves lookup, storing and
// every invalidation (PURGE, /command/*, unsafe methods), so an operator purges the URL as the
// client writes it and reaches what the cache stored under the normalised key. A host whose
// key is the URL as it is builds no KeyRule at all (the hot path then only reads `undefined`).
import { createHash } from 'node:crypto';
import type { Target } from './commands/targets.js';

export interface CachingKeySetting {
  caseSensitive: boolean;
  queryString: { enable: boolean; sort: boolean; ignore: string[]; keep: string[] };
  headers: string[];
  postMethod: { enable: boolean; bodySensitive: boolean; bodyContentLengthMax: number };
}

/** Marks the key of a cached POST answer: no request target holds this character. */
const POST_MARK = '\u0001POST';

export interface KeyRule {
  /** The key URL of a request URL (path plus query). */
  url(url: string): string;
  /** Request header fields (lower-case) the key includes, as extra Vary fields; [] when none. */
  readonly headers: readonly string[];
  /** The key is lower-cased (caseSensitive false). */
  readonly folded: boolean;
}

function parameterName(p: string): string {
  const eq = p.indexOf('=');
  const raw = eq < 0 ? p : p.slice(0, eq);
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/** The rule, or undefined when the key is the URL unchanged (the default). */
export function compileKeyRule(s: CachingKeySetting): KeyRule | undefined {
  const q = s.queryString;
  const lower = !s.caseSensitive;
  const ignore = new Set(q.ignore.map((n) => (lower ? n.toLowerCase() : n)));
  const keep = new Set(q.keep.map((n) => (lower ? n.toLowerCase() : n)));
  const query = !q.enable || q.sort || ignore.size > 0 || keep.size > 0;
  const headers = s.headers.map((h) => h.toLowerCase());
  if (!query && !lower && headers.length === 0) return undefined;
  const url = (u: string): string => {
    const target = lower ? u.toLowerCase() : u;
    const at = target.indexOf('?');
    if (!query || at < 0) return target;
    const path = target.slice(0, at);
    if (!q.enable) return path;
    let params = target.slice(at + 1).split('&').filter((p) => p !== '');
    if (keep.size > 0) params = params.filter((p) => keep.has(parameterName(p)));
    if (ignore.size > 0) params = params.filter((p) => !ignore.has(parameterName(p)));
    // A stable sort by name keeps repeated parameters in their order (`a=2&a=1` stays so).
    if (q.sort) params.sort((x, y) => { const a = parameterName(x); const b = parameterName(y); return a < b ? -1 : a > b ? 1 : 0; });
    return params.length === 0 ? path : `${path}?${params.join('&')}`;
  };
  return { url, headers, folded: lower };
}

/** The key URL of a cacheable POST: the URL's key, the mark, and the body's hash when it counts. */
export function postKeyUrl(keyUrl: string, body: Buffer | undefined): string {
  return body === undefined ? `${keyUrl}${POST_MARK}` : `${keyUrl}${POST_MARK}:${createHash('sha256').update(body).digest('base64url')}`;
}

/**
 * Invalidation targets as keys: an exact URL becomes its key URL and also reaches the POST
 * answers cached under it; a wildcard keeps its pattern (lower-cased for a case-insensitive key).
 */
export function keyTargets(targets: readonly Target[], ruleOf: (vhost: string) => { rule: KeyRule | undefined; post: boolean }): Target[] {
  const out: Target[] = [];
  for (const t of targets) {
    const { rule, post } = ruleOf(t.vhost);
    const folded = rule?.folded === true;
    const prefix = rule === undefined ? t.prefix : t.wildcard ? (folded ? t.prefix.toLowerCase() : t.prefix) : rule.url(t.prefix);
    const match = t.match !== undefined && folded ? new RegExp(t.match.source, 'i') : t.match;
    out.push({ ...t, prefix, ...(match === undefined ? {} : { match }) });
    if (post && !t.wildcard) out.push({ vhost: t.vhost, prefix: `${prefix}${POST_MARK}`, wildcard: true, text: t.text });
  }
  return out;
}
