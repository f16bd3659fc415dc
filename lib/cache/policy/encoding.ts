// Compression at the edge, the rules part (issue 28): which content coding a client gets (RFC
// 9110 12.5.3), which stored answers may be compressed, and the fields of an encoded copy. Pure
// functions, so negotiation is tested without a socket; lib/pipeline/encode.ts applies them.
//
// Negotiation yields one of four keys (br, zstd, gzip, identity), as Varnish normalises
// Accept-Encoding: however many spellings clients send, an object has at most four variants,
// and each encoded copy is stored once under its key.
import type { CacheEntryMeta, StoredHeaders } from '../store.js';

export type Coding = 'br' | 'zstd' | 'gzip';

/** A weight (RFC 9110 12.4.2); NaN when malformed. */
function qvalue(s: string): number {
  return /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(s) ? Number(s) : NaN;
}

/** The weights an Accept-Encoding gives: per coding (lower case, x-gzip as gzip), `*` included. */
function weights(value: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const member of value.split(',')) {
    const parts = member.split(';');
    let coding = parts[0]!.trim().toLowerCase();
    if (coding.length === 0) continue;
    if (coding === 'x-gzip') coding = 'gzip';
    let q = 1;
    let bad = false;
    for (let i = 1; i < parts.length; i++) {
      const [name, v] = parts[i]!.split('=').map((p) => p.trim());
      if (name?.toLowerCase() !== 'q') continue;
      q = qvalue(v ?? '');
      if (Number.isNaN(q)) bad = true;
    }
    // A member with a malformed weight says nothing (it is not read as q=1).
    if (bad) continue;
    out.set(coding, Math.max(q, out.get(coding) ?? -1));
  }
  return out;
}

/**
 * The coding a client gets: of the `offered` codings (in the server's order of preference), the
 * one the client weighs highest (q > 0; `*` stands for the codings it does not name, q=0 refuses),
 * ties going to the earlier offered. `identity` when the client sends no Accept-Encoding (a
 * client that says nothing gets what it surely understands, as CDNs do), accepts none of them, or
 * weighs identity explicitly above them. A client that refuses identity too (`identity;q=0`) and
 * accepts nothing offered still gets identity: RFC 9110 12.5.3 lets a server disregard the field
 * then rather than answer 406.
 */
export function chooseEncoding(accept: string | string[] | undefined, offered: readonly Coding[]): Coding | 'identity' {
  if (accept === undefined || offered.length === 0) return 'identity';
  const w = weights(typeof accept === 'string' ? accept : accept.join(','));
  const star = w.get('*');
  let best: Coding | 'identity' = 'identity';
  let bestQ = 0;
  for (const c of offered) {
    const q = w.get(c) ?? star ?? 0;
    if (q > bestQ) { best = c; bestQ = q; }
  }
  const identityQ = w.get('identity');
  if (best !== 'identity' && identityQ !== undefined && identityQ > bestQ) return 'identity';
  return best;
}

/** What decides whether a stored answer is compressed (functions.compression, compiled). */
export interface CompressionRules {
  /** Media types compressed: exact `type/subtype`, prefixes `type/`, suffixes `+json`. */
  exact: ReadonlySet<string>;
  prefixes: readonly string[];
  suffixes: readonly { prefix: string; suffix: string }[];
  codings: readonly Coding[];
  minSize: number;
  maxSize: number;
}

/** Compiles the `types` list of functions.compression. */
export function typeRules(types: readonly string[]): Pick<CompressionRules, 'exact' | 'prefixes' | 'suffixes'> {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  const suffixes: { prefix: string; suffix: string }[] = [];
  for (const t of types) {
    const slash = t.indexOf('/');
    const sub = t.slice(slash + 1);
    if (sub === '*') prefixes.push(t.slice(0, slash + 1));
    else if (sub.startsWith('*+')) suffixes.push({ prefix: t.slice(0, slash + 1), suffix: sub.slice(1) });
    else exact.add(t);
  }
  return { exact, prefixes, suffixes };
}

/**
 * The last answer of compressibleType: a host's answers mostly carry one Content-Type, and every
 * fetched answer of a host that compresses asks (its trim and lower-casing made two strings).
 */
let lastRules: CompressionRules | undefined;
let lastType = '';
let lastAnswer = false;

/** Whether a Content-Type (parameters allowed) is one of the compressible types. */
export function compressibleType(contentType: string | string[] | undefined, rules: CompressionRules): boolean {
  if (contentType === undefined || Array.isArray(contentType)) return false;
  if (contentType === lastType && rules === lastRules) return lastAnswer;
  const answer = typeMatches(contentType, rules);
  lastRules = rules;
  lastType = contentType;
  lastAnswer = answer;
  return answer;
}

function typeMatches(contentType: string, rules: CompressionRules): boolean {
  const semi = contentType.indexOf(';');
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (rules.exact.has(type)) return true;
  // Indexed loops: this runs on every fetched answer of a host that compresses.
  const prefixes = rules.prefixes;
  for (let i = 0; i < prefixes.length; i++) if (type.startsWith(prefixes[i]!) && type.length > prefixes[i]!.length) return true;
  const suffixes = rules.suffixes;
  for (let i = 0; i < suffixes.length; i++) {
    const s = suffixes[i]!;
    if (type.startsWith(s.prefix) && type.endsWith(s.suffix) && type.length > s.prefix.length + s.suffix.length) return true;
  }
  return false;
}

/** The variant key of a stored copy encoded with `coding` (never selected by variantMatches). */
export function encodedVariantKey(coding: Coding, baseVariantKey: string): string {
  return `\u0003${coding}\u0003${baseVariantKey}`;
}

/** Whether a variant key names an encoded copy made by this cache. */
function isEncodedVariant(variantKey: string): boolean {
  return variantKey.charCodeAt(0) === 3;
}

/**
 * Whether a stored answer may be compressed: a complete 200 of a compressible type within the
 * sizes, not encoded already (the origin's coding is passed as it is: no double compression),
 * without `no-transform` (RFC 9110 7.7, RFC 9111 5.2.2.6; the caller knows it parsed) and not
 * varying on everything.
 */
export function mayEncode(meta: CacheEntryMeta, rules: CompressionRules, noTransform: boolean): boolean {
  if (meta.status !== 200 || meta.size < rules.minSize || meta.size > rules.maxSize || isEncodedVariant(meta.variantKey)) return false;
  const h = meta.headers;
  const ce = h['content-encoding'];
  if (ce !== undefined && (Array.isArray(ce) || ce.trim().toLowerCase() !== 'identity')) return false;
  if (meta.vary[0] === '*' || !compressibleType(h['content-type'], rules)) return false;
  return !noTransform && h['content-range'] === undefined;
}

/** Vary with Accept-Encoding added (once). */
export function varyWithAcceptEncoding(vary: string | string[] | undefined): string {
  const list = vary === undefined ? '' : Array.isArray(vary) ? vary.join(', ') : vary;
  if (/(^|,)\s*accept-encoding\s*(,|$)/i.test(list)) return list;
  return list.trim().length === 0 ? 'Accept-Encoding' : `${list}, Accept-Encoding`;
}

/**
 * An entity tag of the encoded copy: the coding appended inside the quotes (`"abc"` ->
 * `"abc-br"`, weakness kept), so a validator never names two representations (RFC 9110 8.8.3)
 * and If-None-Match / If-Range tell the copies apart; undefined when the tag is malformed.
 */
function encodedEtag(etag: string, coding: Coding): string | undefined {
  const m = /^(W\/)?"([^"]*)"$/.exec(etag.trim());
  return m === null ? undefined : `${m[1] ?? ''}"${m[2]}-${coding}"`;
}

/** Fields that describe the identity bytes and are wrong for an encoded copy. */
const IDENTITY_ONLY = ['content-md5', 'content-digest', 'repr-digest', 'digest', 'content-length'];

/** The stored fields of the copy of `base` encoded with `coding` into `size` bytes. */
export function encodedHeaders(base: StoredHeaders, coding: Coding, size: number): StoredHeaders {
  const out: StoredHeaders = {};
  for (const name in base) if (!IDENTITY_ONLY.includes(name)) out[name] = base[name]!;
  out['content-encoding'] = coding;
  out['content-length'] = String(size);
  out.vary = varyWithAcceptEncoding(base.vary);
  const etag = base.etag;
  delete out.etag;
  if (typeof etag === 'string') {
    const tag = encodedEtag(etag, coding);
    if (tag !== undefined) out.etag = tag;
  }
  return out;
}
