// Secondary cache keys (RFC 9111 4.1, RFC 9110 12.5.5).
import { type HeaderMap } from './headers.js';

/**
 * Lower-case, de-duplicated field names of the response's Vary. `['*']` when any member is `*`:
 * such a response never matches a later request (RFC 9110 12.5.5).
 */
export function varyHeaders(resHeaders: HeaderMap): string[] {
  const v = resHeaders['vary'];
  if (v === undefined) return [];
  const out: string[] = [];
  const lines = typeof v === 'string' ? [v] : v;
  for (const line of lines) {
    let start = 0;
    for (let i = 0; i <= line.length; i++) {
      if (i === line.length || line.charCodeAt(i) === 44) {
        const name = line.slice(start, i).trim().toLowerCase();
        start = i + 1;
        if (name.length === 0) continue;
        if (name === '*') return ['*'];
        if (!out.includes(name)) out.push(name);
      }
    }
  }
  return out;
}

/** True when the Vary names can never match a request. */
export function varyNeverMatches(varyNames: readonly string[]): boolean {
  return varyNames.length > 0 && varyNames[0] === '*';
}

/** Content codings this cache tells apart in Accept-Encoding, in the order of a variant key. */
const CODINGS = ['br', 'zstd', 'gzip', 'deflate'] as const;
const KNOWN_CODINGS: ReadonlySet<string> = new Set([...CODINGS, 'x-gzip', 'identity']);

/** Parses a qvalue (RFC 9110 12.4.2); NaN when malformed. */
function qvalue(s: string): number {
  const n = Number(s);
  return s.length > 0 && s.length <= 5 && n >= 0 && n <= 1 ? n : NaN;
}

/**
 * Calls `each(coding, q)` for every member of an Accept-Encoding value (coding lower-case,
 * x-gzip as gzip); members with a malformed weight are skipped.
 */
function eachCoding(value: string, each: (coding: string, q: number) => void): void {
  let start = 0;
  for (let i = 0; i <= value.length; i++) {
    if (i !== value.length && value.charCodeAt(i) !== 44) continue;
    const member = value.slice(start, i);
    start = i + 1;
    const semi = member.indexOf(';');
    let coding = (semi < 0 ? member : member.slice(0, semi)).trim().toLowerCase();
    if (coding.length === 0) continue;
    if (coding === 'x-gzip') coding = 'gzip';
    let weight = 1;
    if (semi >= 0) {
      const param = member.slice(semi + 1).trim();
      const eq = param.indexOf('=');
      if (eq > 0 && param.slice(0, eq).trim().toLowerCase() === 'q') {
        weight = qvalue(param.slice(eq + 1).trim());
        if (Number.isNaN(weight)) continue;
      }
    }
    each(coding, weight);
  }
}

/**
 * Reduces Accept-Encoding to the set of codings this cache tells apart that the client accepts
 * (q > 0), in a fixed order ("br,gzip,zstd"), else `identity`. The many spellings browsers send
 * collapse into few variants, and a variant is only shared by clients that accept the same
 * known codings, so whatever known coding the origin chose for one of them suits all of them
 * (a preferred-coding key would hand a zstd answer to a client that only accepts br and gzip).
 */
export function normaliseAcceptEncoding(value: string | undefined): string {
  if (value === undefined) return 'identity';
  const q = [-1, -1, -1, -1]; // in CODINGS order; -1 = not mentioned
  let star = -1;
  // Inline rather than eachCoding: this runs on every hit of an object that varies on it.
  let start = 0;
  for (let i = 0; i <= value.length; i++) {
    if (i !== value.length && value.charCodeAt(i) !== 44) continue;
    const member = value.slice(start, i);
    start = i + 1;
    const semi = member.indexOf(';');
    const coding = (semi < 0 ? member : member.slice(0, semi)).trim().toLowerCase();
    if (coding.length === 0) continue;
    let weight = 1;
    if (semi >= 0) {
      const param = member.slice(semi + 1).trim();
      const eq = param.indexOf('=');
      if (eq > 0 && param.slice(0, eq).trim().toLowerCase() === 'q') {
        weight = qvalue(param.slice(eq + 1).trim());
        if (Number.isNaN(weight)) continue;
      }
    }
    if (coding === '*') { star = weight; continue; }
    const idx = coding === 'x-gzip' ? 2 : CODINGS.indexOf(coding as (typeof CODINGS)[number]);
    if (idx >= 0 && weight > q[idx]!) q[idx] = weight;
  }
  let key = '';
  for (let k = 0; k < CODINGS.length; k++) {
    // "*" covers every coding not listed explicitly (RFC 9110 12.5.3).
    const w = q[k]! >= 0 ? q[k]! : star;
    if (w > 0) key = key.length === 0 ? CODINGS[k]! : `${key},${CODINGS[k]}`;
  }
  return key.length === 0 ? 'identity' : key;
}

/**
 * May a stored response with this Content-Encoding answer a request with this Accept-Encoding
 * (RFC 9110 12.5.3)? Absent / identity content coding is always acceptable here (a client that
 * refuses identity gets it anyway, as the origin would answer). Known codings are settled by the
 * variant key already; this is for the codings the key does not tell apart.
 */
export function encodingAcceptable(acceptEncoding: string | string[] | undefined, contentEncoding: string | string[] | undefined): boolean {
  if (contentEncoding === undefined) return true;
  const ce = (typeof contentEncoding === 'string' ? contentEncoding : contentEncoding.join(',')).trim().toLowerCase();
  if (ce.length === 0 || ce === 'identity') return true;
  if (acceptEncoding === undefined) return false;
  // Stacked codings ("gzip, br"): every one of them must be accepted.
  let ok = true;
  for (const wanted of ce.split(',')) {
    let coding = wanted.trim();
    if (coding === 'x-gzip') coding = 'gzip';
    let q = -1;
    let star = -1;
    eachCoding(typeof acceptEncoding === 'string' ? acceptEncoding : acceptEncoding.join(','), (c, w) => {
      if (c === coding) q = Math.max(q, w);
      else if (c === '*') star = w;
    });
    if ((q >= 0 ? q : star) <= 0) ok = false;
  }
  return ok;
}

/** True when a stored Content-Encoding needs `encodingAcceptable` (the variant key does not cover it). */
export function needsEncodingCheck(contentEncoding: string | string[] | undefined): boolean {
  if (contentEncoding === undefined) return false;
  if (typeof contentEncoding !== 'string') return true;
  // The usual spelling first: no string work on the hit path.
  return !KNOWN_CODINGS.has(contentEncoding) && !KNOWN_CODINGS.has(contentEncoding.trim().toLowerCase());
}

/** Trims, collapses whitespace runs and spaces list commas uniformly (", "). */
function normaliseValue(v: string): string {
  let out = '';
  let pendingSpace = false;
  let i = 0;
  const len = v.length;
  while (i < len && (v.charCodeAt(i) === 32 || v.charCodeAt(i) === 9)) i++;
  for (; i < len; i++) {
    const c = v.charCodeAt(i);
    if (c === 32 || c === 9) { pendingSpace = true; continue; }
    if (c === 44) { out += ', '; pendingSpace = false; while (i + 1 < len && (v.charCodeAt(i + 1) === 32 || v.charCodeAt(i + 1) === 9)) i++; continue; }
    if (pendingSpace && out.length > 0 && !out.endsWith(' ')) out += ' ';
    pendingSpace = false;
    out += v[i];
  }
  return out.endsWith(' ') ? out.slice(0, -1) : out;
}

/** Fields whose values are lists of weighted members compared without regard to case (RFC 9110 12.5.1, 12.5.2, 12.5.4). */
const WEIGHTED_LISTS: ReadonlySet<string> = new Set(['accept', 'accept-charset', 'accept-language']);

/** A weight as RFC 9110 12.4.2 spells it. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The canonical form of Accept, Accept-Charset or Accept-Language, or undefined when the value
 * is not a plain list (a quoted string, a malformed weight or parameter): such a value is only
 * trimmed, so it keys a variant of its own. Case (of tokens and parameter names; parameter
 * values can be case-sensitive), spaces, the spelling of weights (`q=0.50`, `q=1`) and repeated
 * identical members do not matter; members are ordered by weight. Members of equal weight keep
 * their order: origins (Django, Rails, Express's negotiator, Java's LanguageRange, ASP.NET)
 * break ties by it, so `da, en` and `en, da` are different requests, not one set.
 */
function normaliseWeightedList(value: string): string | undefined {
  if (value.includes('"')) return undefined;
  const members: { text: string; q: number }[] = [];
  for (const part of value.split(',')) {
    const pieces = part.split(';');
    let text = pieces[0]!.trim().toLowerCase();
    if (text.length === 0) {
      if (pieces.length > 1) return undefined;
      continue; // empty list elements are allowed (RFC 9110 5.6.1)
    }
    let q = 1;
    for (let i = 1; i < pieces.length; i++) {
      const param = pieces[i]!.trim();
      const eq = param.indexOf('=');
      if (eq <= 0) return undefined;
      const name = param.slice(0, eq).trim().toLowerCase();
      const v = param.slice(eq + 1).trim();
      if (name === 'q') {
        if (!QVALUE.test(v)) return undefined;
        q = Number(v);
      } else {
        text += `;${name}=${v}`;
      }
    }
    if (!members.some((m) => m.text === text && m.q === q)) members.push({ text, q });
  }
  // Array.prototype.sort is stable: equal weights keep the client's order.
  members.sort((x, y) => y.q - x.q);
  let out = '';
  for (const m of members) {
    if (out.length > 0) out += ',';
    out += m.q === 1 ? m.text : `${m.text};q=${m.q}`;
  }
  return out;
}

/**
 * Canonical forms of the weighted-list values seen lately. This runs on every hit of an object
 * that varies on one of them, and clients send few distinct values (one per browser and locale):
 * the parse is paid once per value, not per request. Cleared whole when full.
 */
const LIST_KEYS = new Map<string, string>();
const LIST_KEYS_MAX = 1024;

function weightedListKey(value: string): string {
  let k = LIST_KEYS.get(value);
  if (k !== undefined) return k;
  k = normaliseWeightedList(value) ?? normaliseValue(value);
  if (LIST_KEYS.size >= LIST_KEYS_MAX) LIST_KEYS.clear();
  LIST_KEYS.set(value, k);
  return k;
}

/**
 * The variant key of a request for the given Vary names: `name=value` pairs joined by newlines.
 * An absent field is written without `=` so it differs from an empty one (RFC 9111 4.1).
 * '' when the response has no Vary.
 */
export function variantKey(varyNames: readonly string[], reqHeaders: HeaderMap): string {
  let key = '';
  for (let k = 0; k < varyNames.length; k++) {
    const name = varyNames[k];
    const raw = reqHeaders[name];
    if (k > 0) key += '\n';
    if (name === 'accept-encoding') {
      key += name + '=' + normaliseAcceptEncoding(raw === undefined ? undefined : typeof raw === 'string' ? raw : raw.join(','));
      continue;
    }
    if (raw === undefined) { key += name; continue; }
    const value = typeof raw === 'string' ? raw : raw.join(',');
    key += name + '=' + (WEIGHTED_LISTS.has(name) ? weightedListKey(value) : normaliseValue(value));
  }
  return key;
}
