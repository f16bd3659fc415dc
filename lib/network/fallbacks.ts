// `hosting[].fallbacks` compiled once per setting load: per matchingList entry the status codes
// it answers (exact, `5xx`, `fail`), its pattern ($URL, $URLMATCH, $HEADER of the request and
// $RESHEADER of the answer), where it routes (`replace`) and the status finally sent
// (`serviceCode`). Throws RuleError at the JSON path of a bad member; validation runs it too.
import { compilePattern, compileReplace, PatternError, subjectOf, type CompiledPattern, type RuleInput, wildcard } from '../rules/conditions.js';
import { RuleError } from './rules.js';

type Phase = 'frontend' | 'backend';
export type ServiceCode = '#LAST' | '#FIRST' | '#BEFORE' | number;

interface FallbackEntrySetting {
  phase?: Phase;
  resCodes?: (number | string)[];
  pattern?: string | undefined;
  replace?: string | undefined;
  serviceCode?: string | number;
}

/** Document 2's $RESHEADER table: fields never matched, and those that need cacheOriginal. */
const UNSUPPORTED = ['accept-ranges', 'connection', 'content-length', 'date', 'keep-alive', 'vary'];
const NEEDS_CACHE_ORIGINAL = ['content-language', 'content-location', 'content-md5', 'proxy-authenticate', 'retry-after', 'te', 'trailer',
  'warning', 'www-authenticate'];
/** Matched on every answer; any other field (Set-Cookie, custom ones) only under an instant bypass. */
const SUPPORTED = new Set(['cache-control', 'content-disposition', 'content-encoding', 'content-type', 'etag', 'expire', 'expires', 'last-modified',
  'location', 'server', 'transfer-encoding']);

type AnswerFields = Record<string, string | string[] | number | undefined>;

interface ResHeaderTest { name: string; negated: boolean; instantOnly: boolean; test: (value: string | undefined) => boolean }

export interface FallbackRule {
  index: number;
  /** The entry as written (the setting trace shows it). */
  entry: unknown;
  phase: Phase;
  codes: (status: number) => boolean;
  pattern: CompiledPattern | undefined;
  resHeaders: readonly ResHeaderTest[];
  /** undefined: the same URL again (a retry, which may reach another origin address). */
  replace: ((captures: readonly string[]) => string) | undefined;
  serviceCode: ServiceCode;
}

/** Splits at the `&` outside brackets (a regex may hold `&` inside a class). */
function splitConditions(pattern: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') { i++; continue; }
    if (c === '[') depth++;
    else if (c === ']') depth--;
    else if (c === '&' && depth === 0) { out.push(pattern.slice(start, i).trim()); start = i + 1; }
  }
  out.push(pattern.slice(start).trim());
  return out.filter((s) => s !== '');
}

function resHeaderTest(value: string, negated: boolean): ResHeaderTest {
  const colon = value.indexOf(':');
  const name = (colon < 0 ? value : value.slice(0, colon)).trim().toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new PatternError(`RESHEADER[${value}]: "${name}" is not a header name`);
  if (UNSUPPORTED.includes(name)) throw new PatternError(`RESHEADER[${value}]: ${name} cannot be matched (document 2: not supported)`);
  if (NEEDS_CACHE_ORIGINAL.includes(name)) {
    throw new PatternError(`RESHEADER[${value}]: ${name} can be matched only with cacheOriginal, which this server does not offer`);
  }
  const instantOnly = !SUPPORTED.has(name);
  if (colon < 0) return { name, negated, instantOnly, test: (v) => v !== undefined };
  const want = value.slice(colon + 1).trim();
  if (want === '') return { name, negated, instantOnly, test: (v) => v === '' };
  // The value is a wildcard pattern, as $HEADER's is (lib/rules/conditions.ts).
  const re = wildcard(want, true);
  return { name, negated, instantOnly, test: (v) => v !== undefined && re.test(v) };
}

function codesTest(codes: (number | string)[]): (status: number) => boolean {
  if (codes.length === 0) throw new PatternError('resCodes lists no code');
  const exact = new Set<number>();
  const classes = new Set<number>();
  let fail = false;
  for (const c of codes) {
    if (typeof c === 'number') exact.add(c);
    else if (c.toLowerCase() === 'fail') fail = true;
    else if (/^[1-5]xx$/i.test(c)) classes.add(Number(c[0]));
    else exact.add(Number(c));
  }
  return (status) => (status < 0 ? fail : exact.has(status) || classes.has(Math.floor(status / 100)));
}

function compileEntry(e: FallbackEntrySetting, index: number, path: string): FallbackRule {
  const at = <T>(member: string, make: () => T): T => {
    try {
      return make();
    } catch (err) {
      if (err instanceof PatternError) throw new RuleError(`${path}.${member}`, err.message);
      throw err;
    }
  };
  const codes = at('resCodes', () => codesTest(e.resCodes ?? []));
  const resHeaders: ResHeaderTest[] = [];
  let pattern: CompiledPattern | undefined;
  if (e.pattern !== undefined && e.pattern.trim() !== '') {
    pattern = at('pattern', () => {
      const rest: string[] = [];
      for (const c of splitConditions(e.pattern!)) {
        const m = /^(!?)\$?RESHEADER\[([\s\S]*)\]$/i.exec(c);
        if (m === null) rest.push(c);
        else resHeaders.push(resHeaderTest(m[2]!, m[1] === '!'));
      }
      return rest.length === 0 ? undefined : compilePattern(rest.join('&'), { caseSensitive: true, allowUrl: true, names: ['URL', 'URLMATCH', 'HEADER'] });
    });
  }
  const replace = e.replace;
  const code = e.serviceCode ?? '#LAST';
  return {
    index, entry: e, phase: e.phase ?? 'frontend', codes, pattern, resHeaders, replace: replace === undefined || replace.trim() === '' ? undefined : compileReplace(replace),
    // Validation (semantic.ts) refused any other string.
    serviceCode: typeof code === 'number' ? code : (code as ServiceCode),
  };
}

/** undefined when fallbacks are off or list nothing (the host then pays nothing for them). */
export function compileFallbacks(f: { enable: boolean; matchingList: FallbackEntrySetting[] }, base: string): FallbackRule[] | undefined {
  if (!f.enable || f.matchingList.length === 0) return undefined;
  return f.matchingList.map((e, k) => compileEntry(e, k, `${base}.fallbacks.matchingList[${k}]`));
}

function fieldValue(v: string | string[] | number | undefined): string | undefined {
  return v === undefined ? undefined : Array.isArray(v) ? v.join(', ') : String(v);
}

/**
 * The first rule for this answer: `status` -1 for a failed origin exchange; `origin` true at an
 * origin answer (both phases apply), false for an answer from the cache (frontend only).
 * `instant`: an instant bypass, whose every answer field may be matched.
 */
export function findFallback(rules: readonly FallbackRule[], status: number, origin: boolean, input: RuleInput,
  fields: AnswerFields, instant: boolean): { rule: FallbackRule; captures: readonly string[] } | undefined {
  for (const rule of rules) {
    if (!origin && rule.phase === 'backend') continue;
    if (!rule.codes(status)) continue;
    let ok = true;
    for (const h of rule.resHeaders) {
      const v = h.instantOnly && !instant ? undefined : fieldValue(fields[h.name]);
      if (h.test(v) === h.negated) { ok = false; break; }
    }
    if (!ok) continue;
    const captures = rule.pattern === undefined ? [subjectOf(input)] : rule.pattern.match(input);
    if (captures !== undefined) return { rule, captures };
  }
  return undefined;
}
