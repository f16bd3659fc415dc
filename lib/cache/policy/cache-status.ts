// The Cache-Status response field (RFC 9211): one List member per cache that handled the request,
// the cache nearest the origin first, each cache appending its own. This file only spells a member
// as Structured Fields (RFC 8941) write it; what the member says is decided by the pipeline
// (lib/pipeline/cache-status.ts), which knows how the request was served.

/** Why a request went forward (RFC 9211 2.2). */
export type CacheStatusFwd = 'bypass' | 'method' | 'uri-miss' | 'vary-miss' | 'miss' | 'request' | 'stale' | 'partial';

export interface CacheStatusParams {
  /** Answered from the cache, nothing forwarded (2.1); excludes `fwd`. */
  hit?: boolean;
  fwd?: CacheStatusFwd;
  /** The status the next hop (the origin) answered the forwarded request with (2.3). */
  fwdStatus?: number;
  /** Remaining freshness lifetime in seconds, negative when stale (2.4). */
  ttl?: number;
  /** The cache stored the answer (2.5). */
  stored?: boolean;
  /** The request was collapsed with others: true reused, false had to go alone after all (2.6). */
  collapsed?: boolean;
  /** The cache key (2.7), only when the operator asks for it. */
  key?: string;
  /** Extra detail (2.8), a token. */
  detail?: string;
}

/** sf-token: ( ALPHA / "*" ) *( tchar / ":" / "/" ). */
const TOKEN = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*$/;

/**
 * An sf-string: printable ASCII between quotes, `"` and `\` escaped. Anything else (control
 * characters, non-ASCII of a URL) cannot be carried and is percent-encoded, as a URL would be.
 */
function sfString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) out += `\\${s[i]}`;
    else if (c >= 0x20 && c <= 0x7e) out += s[i];
    else for (const b of c < 0x100 ? [c] : Buffer.from(s[i]!)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `${out}"`;
}

/** The member's bare item: a token when the name is one (RFC 9211 2: token or string). */
export function cacheNameItem(name: string): string {
  return TOKEN.test(name) ? name : sfString(name);
}

/** One member: `name` (already an item, cacheNameItem) with its parameters, in RFC 9211 order. */
export function cacheStatusMember(nameItem: string, p: CacheStatusParams): string {
  let out = nameItem;
  if (p.hit === true) out += '; hit';
  else if (p.fwd !== undefined) {
    out += `; fwd=${p.fwd}`;
    if (p.fwdStatus !== undefined && p.fwdStatus >= 100 && p.fwdStatus <= 999) out += `; fwd-status=${p.fwdStatus}`;
  }
  if (p.ttl !== undefined && Number.isFinite(p.ttl)) out += `; ttl=${Math.trunc(p.ttl)}`;
  // stored and collapsed are meaningful only when the request went forward (2.5, 2.6).
  if (p.fwd !== undefined && p.hit !== true) {
    if (p.stored === true) out += '; stored';
    if (p.collapsed === true) out += '; collapsed';
    else if (p.collapsed === false) out += '; collapsed=?0';
  }
  if (p.key !== undefined) out += `; key=${sfString(p.key)}`;
  if (p.detail !== undefined && TOKEN.test(p.detail)) out += `; detail=${p.detail}`;
  return out;
}

/**
 * The field with our member appended to what the response carried already (RFC 9211 2: a cache
 * keeps the members of the caches before it, nearer the origin, and adds its own last).
 */
export function appendCacheStatus(existing: string | readonly string[] | number | undefined, member: string): string {
  if (existing === undefined) return member;
  const prior = Array.isArray(existing) ? existing.join(', ') : String(existing);
  return prior.trim() === '' ? member : `${prior}, ${member}`;
}

/**
 * Remaining freshness in whole seconds at `now` from the time the copy goes stale: up when
 * fresh (so ttl + Age is the lifetime), down when stale (a copy stale by half a second is -1).
 */
export function ttlSeconds(staleAt: number, now: number): number {
  const d = (staleAt - now) / 1000;
  return d > 0 ? Math.ceil(d) : Math.floor(d);
}
