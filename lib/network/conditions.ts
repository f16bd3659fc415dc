// The condition language of document 2 (`NAME[value]` joined by `&`, `!` negates, `$` prefix
// optional) as the network rules use it: bypass, modify and fallbacks. Compiled once per
// setting load (a bad regex or address refuses the setting at its JSON path); matching reads
// only what the request already holds.
import type { IncomingHttpHeaders } from 'node:http';
import { compileAddress, inRange, parseIp, type AddressRange } from '../access/ip.js';

/** What a condition looks at: the request, and for RESHEADER the answer's fields. */
export interface MatchInput {
  url: string;
  method: string;
  headers: IncomingHttpHeaders;
  protocol: string;
  clientAddress: string;
  resHeaders?: Record<string, string | string[] | number | undefined>;
}

export type ConditionName = 'URL' | 'URLMATCH' | 'HEADER' | 'RESHEADER' | 'METHOD' | 'PROTOCOL' | 'IP';

interface Condition { name: ConditionName; negate: boolean; test: (m: MatchInput) => boolean }

/** A compiled pattern: `match` gives the URL condition's captures (#0..#9), or null. */
export interface Pattern {
  readonly text: string;
  match(m: MatchInput): RegExpExecArray | string[] | null;
}

export class PatternError extends Error {
  readonly code = 'BAD_PATTERN';
  override name = 'PatternError';
}

function regex(source: string, caseSensitive: boolean, what: string): RegExp {
  try {
    return new RegExp(source, caseSensitive ? '' : 'i');
  } catch (err) {
    throw new PatternError(`${what}: invalid regular expression ${JSON.stringify(source)} (${(err as Error).message})`);
  }
}

function fieldValue(v: string | string[] | number | undefined): string | undefined {
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(', ') : String(v);
}

/** `Key: value` (value a regex), `Key:` (present and empty) or `Key` (present). */
function headerTest(arg: string, caseSensitive: boolean, name: string, read: (m: MatchInput, key: string) => string | undefined): (m: MatchInput) => boolean {
  const colon = arg.indexOf(':');
  const key = (colon < 0 ? arg : arg.slice(0, colon)).trim().toLowerCase();
  if (key === '') throw new PatternError(`${name}[${arg}]: a header name is required`);
  if (colon < 0) return (m) => read(m, key) !== undefined;
  const value = arg.slice(colon + 1).trim();
  if (value === '') return (m) => read(m, key) === '';
  const re = regex(value, caseSensitive, `${name}[${arg}]`);
  return (m) => { const v = read(m, key); return v !== undefined && re.test(v); };
}

function compileOne(name: string, arg: string, caseSensitive: boolean, allowed: readonly ConditionName[]): Condition['test'] {
  if (!(allowed as readonly string[]).includes(name)) {
    throw new PatternError(`${name}[...] is not a condition of this rule (allowed: ${allowed.join(', ')})`);
  }
  switch (name as ConditionName) {
    case 'URL':
    case 'URLMATCH': {
      const re = regex(arg, caseSensitive, `${name}[${arg}]`);
      return (m) => re.test(m.url);
    }
    case 'HEADER': return headerTest(arg, caseSensitive, name, (m, k) => fieldValue(m.headers[k]));
    case 'RESHEADER': return headerTest(arg, caseSensitive, name, (m, k) => fieldValue(m.resHeaders?.[k]));
    case 'METHOD': {
      const methods = arg.split(';').map((s) => s.trim().toUpperCase()).filter((s) => s !== '');
      if (methods.length === 0) throw new PatternError('METHOD[] names no method');
      return (m) => methods.includes(m.method);
    }
    case 'PROTOCOL': {
      const list = arg.split('|').map((s) => s.trim().toLowerCase());
      for (const p of list) if (p !== 'http' && p !== 'https' && p !== 'http2') throw new PatternError(`PROTOCOL[${arg}]: ${p} is not http, https or http2`);
      return (m) => list.includes(m.protocol);
    }
    case 'IP': {
      let ranges: AddressRange[];
      try {
        ranges = arg.split(';').map((s) => s.trim()).filter((s) => s !== '').map((s) => compileAddress(s));
      } catch (err) {
        throw new PatternError(`IP[${arg}]: ${(err as Error).message}`);
      }
      return (m) => { const ip = parseIp(m.clientAddress); return ip !== undefined && ranges.some((r) => inRange(ip, r)); };
    }
  }
}

/** Splits `A[x]&!B[y]` into its conditions; a value may hold `]` and `&` (a regex). */
function split(text: string): { negate: boolean; name: string; arg: string }[] {
  const out: { negate: boolean; name: string; arg: string }[] = [];
  let rest = text.trim();
  while (rest !== '') {
    const head = /^(!?)\$?([A-Za-z]+)\[/.exec(rest);
    if (head === null) throw new PatternError(`cannot read a condition at ${JSON.stringify(rest)}: expected NAME[value]`);
    let end = -1;
    for (let i = head[0].length; i < rest.length; i++) {
      if (rest[i] === ']' && /^\s*(&|$)/.test(rest.slice(i + 1))) { end = i; break; }
    }
    if (end < 0) throw new PatternError(`unclosed [ in ${JSON.stringify(rest)}`);
    out.push({ negate: head[1] === '!', name: head[2]!.toUpperCase(), arg: rest.slice(head[0].length, end) });
    rest = rest.slice(end + 1).trim();
    if (rest.startsWith('&')) rest = rest.slice(1).trim();
  }
  return out;
}

/**
 * Compiles a pattern. `allowed` names the conditions the rule accepts. At most one URL condition,
 * never negated (it gives the captures).
 */
export function compilePattern(text: string, caseSensitive: boolean, allowed: readonly ConditionName[]): Pattern {
  const parts = split(text);
  if (parts.length === 0) throw new PatternError('the pattern has no condition');
  let url: RegExp | undefined;
  const conditions: Condition[] = [];
  for (const p of parts) {
    if (p.name === 'URL') {
      if (url !== undefined) throw new PatternError('at most one URL[...] condition is allowed');
      if (p.negate) throw new PatternError('the URL[...] condition cannot be negated');
      compileOne(p.name, p.arg, caseSensitive, allowed);
      url = regex(p.arg, caseSensitive, `URL[${p.arg}]`);
      continue;
    }
    conditions.push({ name: p.name as ConditionName, negate: p.negate, test: compileOne(p.name, p.arg, caseSensitive, allowed) });
  }
  const whole = (m: MatchInput): string[] => [m.url];
  return {
    text,
    match(m) {
      for (const c of conditions) if (c.test(m) === c.negate) return null;
      return url === undefined ? whole(m) : url.exec(m.url);
    },
  };
}

/** `#0`..`#9` in a replacement string from the captures. */
export function substitute(template: string, captures: ArrayLike<string | undefined>): string {
  return template.replace(/#(\d)/g, (_, d: string) => captures[Number(d)] ?? '');
}
