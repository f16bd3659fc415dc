// The condition language of document 2 (urlRewrites, accessControl, modify, bypass ...):
// `$NAME[value]` conditions joined by `&`, each but URL negatable as `!NAME[value]`. A pattern is
// compiled once when a setting loads into a matcher over the request; matching a request
// allocates nothing unless the URL condition matches (its captures).
import type { IncomingHttpHeaders } from 'node:http';
import { compileAddress, inRange, parseIp, type AddressRange, type ParsedIp } from '../access/ip.js';

type Protocol = 'http' | 'https' | 'http2';

/**
 * What a condition looks at. The pipeline fills one object per worker and reuses it (no
 * allocation per request). URL/URLMATCH see the host and the URL joined
 * (`example.com/path?query`): `subject`, made when a regex first needs it (undefined until then).
 */
export interface RuleInput {
  host: string;
  url: string;
  subject: string | undefined;
  method: string;
  headers: IncomingHttpHeaders;
  protocol: Protocol;
  clientAddress: string;
  /** Function-chain calls named in the URL (unique names), empty when none. */
  functions: readonly string[];
}

/** Country code (ISO 3166 alpha-2, upper case) of an address; undefined when unknown. */
export type CountryLookup = (address: string) => string | undefined;

export interface CompileOptions {
  caseSensitive: boolean;
  /** Whether `URL[...]` is allowed (a capture-and-substitute condition). */
  allowUrl: boolean;
  /** Where IP[<country>] looks addresses up; without it a country condition is refused. */
  geo?: CountryLookup | undefined;
  /** Names a condition may take (all when absent): a rule kind that cannot honour one refuses it. */
  names?: readonly ConditionName[];
}

const CONDITION_NAMES = ['URL', 'URLMATCH', 'IP', 'METHOD', 'HEADER', 'PROTOCOL', 'FUNCTION'] as const;
type ConditionName = typeof CONDITION_NAMES[number];

/** A pattern the setting cannot use: the message is shown at the JSON path of the pattern. */
export class PatternError extends Error {}

type Test = (input: RuleInput) => boolean;

/** The whole-match result when a pattern has no URL condition (nothing to capture). */
export const MATCHED: readonly string[] = Object.freeze(['']) as readonly string[];

export interface CompiledPattern {
  /** The condition entries as written (`$URL[...]`, `!IP[...]`), for the setting trace. */
  readonly entries: readonly string[];
  readonly hasUrl: boolean;
  /**
   * undefined: no match. Otherwise the URL captures (`[0]` the whole subject, `[1]`.. groups),
   * or MATCHED when the pattern has no URL condition.
   */
  match(input: RuleInput): readonly string[] | undefined;
}

interface RawCondition { name: ConditionName; negated: boolean; value: string; text: string }

/** Splits `a[..]&!b[..]` into conditions; brackets nest (regex classes) and `\` escapes. */
function split(pattern: string): RawCondition[] {
  const out: RawCondition[] = [];
  let i = 0;
  const len = pattern.length;
  const skipSpace = (): void => { while (i < len && (pattern[i] === ' ' || pattern[i] === '\t')) i++; };
  for (;;) {
    skipSpace();
    const start = i;
    let negated = false;
    if (pattern[i] === '!') { negated = true; i++; } else if (pattern[i] === '$') i++;
    const nameStart = i;
    while (i < len && /[A-Za-z]/.test(pattern[i]!)) i++;
    const name = pattern.slice(nameStart, i).toUpperCase();
    if (!(CONDITION_NAMES as readonly string[]).includes(name)) {
      throw new PatternError(`"${pattern.slice(start, Math.min(len, start + 20))}" is not a condition: expected $NAME[value] with NAME one of ${CONDITION_NAMES.join(', ')}`);
    }
    if (pattern[i] !== '[') throw new PatternError(`${name} must be followed by [value]`);
    let depth = 0;
    const valueStart = i + 1;
    for (; i < len; i++) {
      const c = pattern[i];
      if (c === '\\') { i++; continue; }
      if (c === '[') depth++;
      else if (c === ']' && --depth === 0) break;
    }
    if (i >= len) throw new PatternError(`${name}[ has no closing ]`);
    out.push({ name: name as ConditionName, negated, value: pattern.slice(valueStart, i), text: pattern.slice(start, i + 1) });
    i++;
    skipSpace();
    if (i >= len) return out;
    if (pattern[i] !== '&') throw new PatternError(`expected & between conditions, found "${pattern[i]}"`);
    i++;
  }
}

/** The joined subject, made once per input. */
export function subjectOf(input: RuleInput): string {
  return (input.subject ??= input.host + input.url);
}

const LITERAL = /[A-Za-z0-9/_~%:=,;'"<>@#&-]/;

/**
 * The literal run every match of a regex starts with, read from `from` (`example\.com/img/(.*)`
 * -> `example.com/img/`); it stops at the first character that is not plainly itself.
 */
function leadingLiteral(source: string, from: number): string {
  let out = '';
  for (let i = from; i < source.length; i++) {
    let c = source[i]!;
    if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined || !/[.\/\-?*+()[\]{}|^$\\]/.test(next)) break;
      c = next;
      i++;
    } else if (!LITERAL.test(c)) {
      // A quantifier makes the character before it optional or repeated.
      if (c === '?' || c === '*' || c === '{') out = out.slice(0, -1);
      break;
    }
    out += c;
  }
  return out;
}

type Prefilter = (input: RuleInput) => boolean;

const lowerAscii = (c: number): number => (c >= 65 && c <= 90 ? c | 0x20 : c);

/** `s` starts with the lower-case ASCII `lower`, ignoring ASCII case (as the `i` flag does for ASCII). */
function startsWithFolded(s: string, lower: string, at = 0): boolean {
  if (s.length - at < lower.length) return false;
  for (let i = 0; i < lower.length; i++) if (lowerAscii(s.charCodeAt(at + i)) !== lower.charCodeAt(i)) return false;
  return true;
}

/**
 * A cheap test every subject a regex can match passes, so most requests are turned down with a
 * few character comparisons, without joining host and URL or running the regex. The URL starts
 * with `/` and a host has none, which splits a literal at its first `/`. An alternation anywhere
 * (`^a|b`) makes the literal unreliable: no prefilter.
 */
function prefilter(source: string, caseSensitive: boolean): Prefilter | undefined {
  if (source.includes('|')) return undefined;
  if (source[0] === '^') {
    const lit = leadingLiteral(source, 1);
    if (lit === '') return undefined;
    const slash = lit.indexOf('/');
    if (caseSensitive) {
      if (slash < 0) return (input) => input.host.startsWith(lit);
      const host = lit.slice(0, slash);
      const path = lit.slice(slash);
      return (input) => input.host === host && input.url.startsWith(path);
    }
    const lower = lit.toLowerCase();
    if (slash < 0) return (input) => startsWithFolded(input.host, lower);
    const host = lower.slice(0, slash);
    const path = lower.slice(slash);
    return (input) => input.host.length === host.length && startsWithFolded(input.host, host) && startsWithFolded(input.url, path);
  }
  // Unanchored: the subject must contain the literal, in the URL, in the host, or across them.
  const lit = leadingLiteral(source, 0);
  if (!caseSensitive || lit.length < 3) return undefined;
  const slash = lit.indexOf('/');
  if (slash < 0) return (input) => input.url.includes(lit) || input.host.includes(lit);
  const hostEnd = lit.slice(0, slash);
  const path = lit.slice(slash);
  return (input) => input.url.includes(lit) || (input.host.endsWith(hostEnd) && input.url.startsWith(path));
}

function regex(source: string, name: string, caseSensitive: boolean): RegExp {
  try {
    return new RegExp(source, caseSensitive ? '' : 'i');
  } catch (err) {
    throw new PatternError(`${name}[${source}]: ${(err as Error).message}`);
  }
}

/**
 * Document 2 gives URL and URLMATCH a regex but a HEADER value "a pattern": the wildcard form
 * operators write (`User-Agent: *Mobile*`), `*` any run of characters, the rest literal, matched
 * against the whole value.
 */
export function wildcard(pattern: string, caseSensitive: boolean): RegExp {
  const body = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}$`, caseSensitive ? 's' : 'is');
}

function list(value: string, name: string): string[] {
  const items = value.split(/[;|,]/).map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new PatternError(`${name}[] lists nothing`);
  return items;
}

/** The field's value as one string (a repeated field joined as RFC 9110 5.3 allows). */
function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return v === undefined ? undefined : typeof v === 'string' ? v : v.join(', ');
}

function headerTest(value: string, caseSensitive: boolean): Test {
  const colon = value.indexOf(':');
  const name = (colon < 0 ? value : value.slice(0, colon)).trim().toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new PatternError(`HEADER[${value}]: "${name}" is not a header name`);
  if (colon < 0) return (input) => input.headers[name] !== undefined;
  const want = value.slice(colon + 1).trim();
  if (want === '') return (input) => headerValue(input.headers, name) === '';
  const re = wildcard(want, caseSensitive);
  return (input) => {
    const v = headerValue(input.headers, name);
    return v !== undefined && re.test(v);
  };
}

/** The client address parsed, kept for the next request of the same client. */
let lastAddress = '';
let lastParsed: ParsedIp | undefined;
function clientIp(address: string): ParsedIp | undefined {
  if (address !== lastAddress) {
    lastAddress = address;
    lastParsed = parseIp(address);
  }
  return lastParsed;
}

function ipTest(value: string, geo: CountryLookup | undefined): Test {
  const ranges: AddressRange[] = [];
  const countries: string[] = [];
  for (const item of list(value, 'IP')) {
    if (/^[A-Za-z]{2}$/.test(item)) {
      if (geo === undefined) throw new PatternError(`IP[${item}]: a country code needs GeoIP (env.geoip.path with a .mmdb country database)`);
      countries.push(item.toUpperCase());
      continue;
    }
    try {
      ranges.push(compileAddress(item));
    } catch {
      throw new PatternError(`IP[${item}]: expected an address, a.b.c.L-H range, address/bits, address/mask or a two-letter country code`);
    }
  }
  return (input) => {
    const ip = clientIp(input.clientAddress);
    if (ip !== undefined) for (let k = 0; k < ranges.length; k++) if (inRange(ip, ranges[k]!)) return true;
    if (countries.length === 0) return false;
    const c = geo!(input.clientAddress);
    return c !== undefined && countries.includes(c);
  };
}

function conditionTest(c: RawCondition, opts: CompileOptions): Test {
  switch (c.name) {
    case 'URLMATCH': {
      const re = regex(c.value, c.name, opts.caseSensitive);
      const prefix = prefilter(c.value, opts.caseSensitive);
      if (prefix !== undefined) return (input) => prefix(input) && re.test(subjectOf(input));
      return (input) => re.test(subjectOf(input));
    }
    case 'IP': return ipTest(c.value, opts.geo);
    case 'METHOD': {
      const methods = list(c.value, c.name);
      if (!opts.caseSensitive) {
        const upper = methods.map((m) => m.toUpperCase());
        return (input) => upper.includes(input.method.toUpperCase());
      }
      return (input) => methods.includes(input.method);
    }
    case 'HEADER': return headerTest(c.value, opts.caseSensitive);
    case 'PROTOCOL': {
      const protocols = list(c.value, c.name).map((p) => p.toLowerCase());
      for (const p of protocols) if (p !== 'http' && p !== 'https' && p !== 'http2') throw new PatternError(`PROTOCOL[${c.value}]: "${p}" is not http, https or http2`);
      return (input) => protocols.includes(input.protocol);
    }
    case 'FUNCTION': {
      const names = list(c.value, c.name);
      if (names.includes('*')) return (input) => input.functions.length > 0;
      return (input) => input.functions.some((f) => names.includes(f));
    }
    default: throw new PatternError(`${c.name} is handled apart`);
  }
}

/** Compiles a pattern; throws PatternError with a message for the setting's report. */
export function compilePattern(pattern: string, opts: CompileOptions): CompiledPattern {
  const raw = split(pattern);
  let url: RegExp | undefined;
  let urlPrefilter: Prefilter | undefined;
  const tests: Test[] = [];
  for (const c of raw) {
    if (opts.names !== undefined && !opts.names.includes(c.name)) throw new PatternError(`${c.name}[...] cannot be used here (allowed: ${opts.names.join(', ')})`);
    if (c.name === 'URL') {
      if (!opts.allowUrl) throw new PatternError('URL[...] cannot be used here: use URLMATCH[...]');
      if (c.negated) throw new PatternError('URL[...] cannot be negated: use !URLMATCH[...]');
      if (url !== undefined) throw new PatternError('at most one URL[...] condition is allowed');
      url = regex(c.value, c.name, opts.caseSensitive);
      urlPrefilter = prefilter(c.value, opts.caseSensitive);
      continue;
    }
    const t = conditionTest(c, opts);
    tests.push(c.negated ? (input) => !t(input) : t);
  }
  const entries = raw.map((c) => c.text);
  const n = tests.length;
  return {
    entries,
    hasUrl: url !== undefined,
    match(input) {
      if (urlPrefilter !== undefined && !urlPrefilter(input)) return undefined;
      for (let k = 0; k < n; k++) if (!tests[k]!(input)) return undefined;
      if (url === undefined) return MATCHED;
      return url.exec(subjectOf(input)) ?? undefined;
    },
  };
}

/**
 * A `replace` string compiled: `#0` the whole URL subject, `#1`..`#9` the captures of the URL
 * condition (an absent group is empty). Without captures the string is used as written.
 */
export function compileReplace(replace: string): (captures: readonly string[]) => string {
  const parts = replace.split(/#(\d)/);
  if (parts.length === 1) return () => replace;
  return (captures) => {
    let out = parts[0]!;
    for (let k = 1; k < parts.length; k += 2) out += (captures[Number(parts[k])] ?? '') + parts[k + 1]!;
    return out;
  };
}
