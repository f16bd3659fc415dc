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

/** Codings this node can serve, in its preference order when the client weighs them equally. */
const CODINGS = ['br', 'gzip', 'deflate'] as const;

/** Parses a qvalue (RFC 9110 12.4.2); NaN when malformed. */
function qvalue(s: string): number {
  const n = Number(s);
  return s.length > 0 && s.length <= 5 && n >= 0 && n <= 1 ? n : NaN;
}

/**
 * Reduces Accept-Encoding to the single coding this cache would choose: the supported coding
 * with the highest q > 0 (ties by br, gzip, deflate), else `identity`. The many spellings
 * browsers send ("gzip, deflate, br", "br;q=1.0, gzip;q=0.8, *;q=0.1" ...) collapse into at
 * most four variants.
 */
export function normaliseAcceptEncoding(value: string | undefined): string {
  if (value === undefined) return 'identity';
  const q = [-1, -1, -1]; // br, gzip, deflate; -1 = not mentioned
  let star = -1;
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
    if (coding === '*') star = weight;
    else {
      const idx = coding === 'x-gzip' ? 1 : CODINGS.indexOf(coding as (typeof CODINGS)[number]);
      if (idx >= 0 && weight > q[idx]) q[idx] = weight;
    }
  }
  let best = -1;
  let bestQ = 0;
  for (let k = 0; k < CODINGS.length; k++) {
    // "*" covers every coding not listed explicitly (RFC 9110 12.5.3).
    const w = q[k] >= 0 ? q[k] : star;
    if (w > bestQ) { best = k; bestQ = w; }
  }
  return best < 0 ? 'identity' : CODINGS[best];
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
    key += name + '=' + normaliseValue(typeof raw === 'string' ? raw : raw.join(','));
  }
  return key;
}
