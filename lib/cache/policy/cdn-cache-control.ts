// CDN-Cache-Control (RFC 9213 2.1) is a Structured Field Dictionary (RFC 8941 3.2), not the
// Cache-Control syntax: keys are lower-case, values are typed, parameters ride along, and a field
// that does not parse is ignored as a whole (RFC 8941 4.2), so Cache-Control applies instead.
// This is a small parser for this one field, not a general Structured Fields library. Which of
// the two fields a response's directives come from is decided here too (responseDirectives, which
// needs both parsers), so cache-control.ts needs nothing of this file.
import { DELTA_SECONDS_MAX, emptyDirectives, parseResponseCacheControl, type CacheDirectives, type ResponseDirectives } from './cache-control.js';
import type { HeaderMap } from './headers.js';

type Bare = { t: 'int'; v: number } | { t: 'dec' } | { t: 'str'; v: string } | { t: 'tok'; v: string } | { t: 'bytes' } | { t: 'bool'; v: boolean };
type Member = Bare | { t: 'list'; v: Bare[] };

class Fail extends Error {}

function isLcalpha(c: number): boolean { return c >= 97 && c <= 122; }
function isDigit(c: number): boolean { return c >= 48 && c <= 57; }
function isAlpha(c: number): boolean { return (c >= 65 && c <= 90) || isLcalpha(c); }
/** tchar of RFC 9110 5.6.2 plus ":" and "/" (RFC 8941 sf-token). */
function isTokenChar(c: number): boolean {
  return isAlpha(c) || isDigit(c) || '!#$%&\'*+-.^_`|~:/'.includes(String.fromCharCode(c));
}

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  ch(): number { return this.i < this.s.length ? this.s.charCodeAt(this.i) : -1; }

  sp(): void { while (this.ch() === 32) this.i++; }
  ows(): void { while (this.ch() === 32 || this.ch() === 9) this.i++; }

  key(): string {
    const start = this.i;
    if (!isLcalpha(this.ch()) && this.ch() !== 42 /* * */) throw new Fail();
    this.i++;
    while (isLcalpha(this.ch()) || isDigit(this.ch()) || this.ch() === 95 || this.ch() === 45 || this.ch() === 46 || this.ch() === 42) this.i++;
    return this.s.slice(start, this.i);
  }

  bare(): Bare {
    const c = this.ch();
    if (c === 45 || isDigit(c)) return this.number();
    if (c === 34) return this.string();
    if (c === 58 /* : */) return this.bytes();
    if (c === 63 /* ? */) {
      this.i++;
      if (this.ch() === 49) { this.i++; return { t: 'bool', v: true }; }
      if (this.ch() === 48) { this.i++; return { t: 'bool', v: false }; }
      throw new Fail();
    }
    if (isAlpha(c) || c === 42) {
      const start = this.i++;
      while (isTokenChar(this.ch())) this.i++;
      return { t: 'tok', v: this.s.slice(start, this.i) };
    }
    throw new Fail();
  }

  number(): Bare {
    const start = this.i;
    if (this.ch() === 45) this.i++;
    let digits = 0;
    let dot = -1;
    while (isDigit(this.ch()) || (this.ch() === 46 && dot < 0)) {
      if (this.ch() === 46) dot = digits; else digits++;
      this.i++;
    }
    if (digits === 0) throw new Fail();
    if (dot < 0) {
      if (digits > 15) throw new Fail();
      return { t: 'int', v: Number(this.s.slice(start, this.i)) };
    }
    if (dot === digits || dot > 12 || digits - dot > 3) throw new Fail();
    return { t: 'dec' };
  }

  string(): Bare {
    this.i++;
    let out = '';
    for (;;) {
      const c = this.ch();
      if (c === -1) throw new Fail();
      this.i++;
      if (c === 34) return { t: 'str', v: out };
      if (c === 92) {
        const n = this.ch();
        if (n !== 34 && n !== 92) throw new Fail();
        out += String.fromCharCode(n);
        this.i++;
        continue;
      }
      if (c < 0x20 || c > 0x7e) throw new Fail();
      out += String.fromCharCode(c);
    }
  }

  bytes(): Bare {
    this.i++;
    while (this.ch() !== 58) {
      const c = this.ch();
      if (c === -1 || !(isAlpha(c) || isDigit(c) || c === 43 || c === 47 || c === 61)) throw new Fail();
      this.i++;
    }
    this.i++;
    return { t: 'bytes' };
  }

  /** Parameters are allowed by the syntax; no CDN-Cache-Control directive defines any. */
  params(): void {
    while (this.ch() === 59 /* ; */) {
      this.i++;
      this.sp();
      this.key();
      if (this.ch() === 61) { this.i++; this.bare(); }
    }
  }

  member(): Member {
    if (this.ch() !== 40 /* ( */) { const b = this.bare(); this.params(); return b; }
    this.i++;
    const items: Bare[] = [];
    for (;;) {
      this.sp();
      if (this.ch() === 41 /* ) */) { this.i++; this.params(); return { t: 'list', v: items }; }
      items.push(this.bare());
      this.params();
      if (this.ch() !== 32 && this.ch() !== 41) throw new Fail();
    }
  }

  /** RFC 8941 4.2.2; duplicate keys: the last one wins. */
  dictionary(): Map<string, Member> {
    const out = new Map<string, Member>();
    this.sp();
    if (this.i === this.s.length) return out;
    for (;;) {
      const k = this.key();
      let v: Member;
      if (this.ch() === 61) { this.i++; v = this.member(); } else { v = { t: 'bool', v: true }; this.params(); }
      out.delete(k);
      out.set(k, v);
      this.ows();
      if (this.i === this.s.length) return out;
      if (this.ch() !== 44) throw new Fail();
      this.i++;
      this.ows();
      if (this.i === this.s.length) throw new Fail(); // trailing comma
    }
  }
}

/** The field's dictionary, or undefined when it does not parse (then it is ignored). */
function parseCdnDictionary(value: string | string[]): Map<string, Member> | undefined {
  // Field lines are combined with commas before parsing (RFC 8941 4.2).
  const s = typeof value === 'string' ? value : value.join(',');
  try {
    return new Parser(s).dictionary();
  } catch (e) {
    if (e instanceof Fail) return undefined;
    throw e;
  }
}

function seconds(m: Member): number | undefined {
  if (m.t !== 'int' || m.v < 0) return undefined;
  return Math.min(m.v, DELTA_SECONDS_MAX);
}

function flag(m: Member): boolean {
  return m.t === 'bool' && m.v;
}

/** `no-cache` / `private`: true, or the field names of a string or a list of strings/tokens. */
function fieldList(m: Member): true | string[] | undefined {
  if (m.t === 'bool') return m.v ? true : undefined;
  const names: string[] = [];
  const add = (b: Bare): void => {
    if (b.t !== 'str' && b.t !== 'tok') return;
    for (const n of b.v.split(',')) { const x = n.trim().toLowerCase(); if (x.length > 0 && !names.includes(x)) names.push(x); }
  };
  if (m.t === 'list') m.v.forEach(add); else add(m);
  return names.length > 0 ? names : (m.t === 'str' || m.t === 'tok' || m.t === 'list' ? true : undefined);
}

/**
 * The directives of a CDN-Cache-Control value, or undefined when it is invalid or empty (the
 * caller then uses Cache-Control). A directive whose value has the wrong type is ignored, as if
 * absent (RFC 9213 2.1: `max-age="60"` is not a max-age).
 */
export function parseCdnCacheControl(value: string | string[]): CacheDirectives | undefined {
  const dict = parseCdnDictionary(value);
  if (dict === undefined || dict.size === 0) return undefined;
  const d = emptyDirectives();
  for (const [k, m] of dict) {
    switch (k) {
      case 'max-age': d.maxAge = seconds(m); break;
      case 's-maxage': d.sMaxage = seconds(m); break;
      case 'stale-while-revalidate': d.staleWhileRevalidate = seconds(m); break;
      case 'stale-if-error': d.staleIfError = seconds(m); break;
      case 'no-store': d.noStore = flag(m); break;
      case 'public': d.public = flag(m); break;
      case 'must-revalidate': d.mustRevalidate = flag(m); break;
      case 'proxy-revalidate': d.proxyRevalidate = flag(m); break;
      case 'must-understand': d.mustUnderstand = flag(m); break;
      case 'no-transform': d.noTransform = flag(m); break;
      case 'immutable': d.immutable = flag(m); break;
      case 'no-cache': d.noCache = fieldList(m); break;
      case 'private': d.private = fieldList(m); break;
      default: // unknown directives are ignored
    }
  }
  return d;
}

/**
 * The directives this cache obeys for a response. RFC 9213 2.2: a valid, non-empty
 * CDN-Cache-Control is used and Cache-Control (and Expires) ignored; an empty or unparsable one
 * counts as absent.
 */
export function responseDirectives(headers: HeaderMap): ResponseDirectives {
  const cdn = headers['cdn-cache-control'];
  if (cdn !== undefined) {
    const d = parseCdnCacheControl(cdn);
    if (d !== undefined) return Object.assign(d, { targeted: true });
  }
  return parseResponseCacheControl(headers['cache-control']);
}
