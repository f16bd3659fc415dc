// The network rules of one virtual host compiled from its functions (bypass, modify on both
// sides, cachingKey): built once per setting load, never per request. A host with none of them
// gets `undefined`, so a request there pays one property read. `compileNetwork` throws a
// RuleError naming the JSON path of the first bad member; setting validation runs it too.
import { compileKeyRule, type CachingKeySetting, type KeyRule } from '../cache/key.js';
import { compilePattern, PatternError, type CompiledPattern, type CountryLookup } from '../rules/conditions.js';
import { compileEdit, type EditMode, type HeaderEdit } from './header-edit.js';
import type { ErrorCode } from '../errors/codes.js';


// List items of a host's own functions come without the schema's defaults (a host's functions
// are a partial object merged over the global ones, and a list replaces the global list whole):
// the defaults of an item's members are applied here.
interface EditSetting { key: string; mode?: EditMode; value?: string; match?: string | undefined }
interface ModifySetting {
  matchingList: { pattern?: string | undefined; caseSensitive?: boolean; headers?: EditSetting[]; responseHeaders?: EditSetting[] }[];
}

/** What this module reads of `functions.network`. */
export interface NetworkSetting {
  http: {
    frontEnd: {
      bypass: { postMethod: { enable: boolean }; noCacheRequest: { enable: boolean }; matchingList: { pattern: string; caseSensitive?: boolean; instant?: boolean }[] };
      modify: ModifySetting;
    };
    backEnd: { modify: ModifySetting };
  };
  cache: { cachingKey: CachingKeySetting };
}

export interface ModifyRule {
  /** Its index in matchingList (the setting trace names it). */
  index: number;
  /** The entry as written (the setting trace shows it). */
  entry: unknown;
  pattern: CompiledPattern | undefined;
  headers: HeaderEdit[];
  responseHeaders: HeaderEdit[];
}

interface BypassRule { index: number; entry: unknown; pattern: CompiledPattern; instant: boolean }

export interface NetworkRules {
  frontModify: ModifyRule[] | undefined;
  backModify: ModifyRule[] | undefined;
  /** Pattern bypass entries; undefined when none. */
  bypass: BypassRule[] | undefined;
  /** Requests with Cache-Control / Pragma no-cache bypass the cache. */
  bypassNoCache: boolean;
  key: KeyRule | undefined;
  /** POST answers are cached (cachingKey.postMethod.enable): body limit and whether it keys. */
  post: { max: number; bodySensitive: boolean } | undefined;
}

/** A subclass, not a bare code of lib/errors/codes.ts: it carries the JSON path of the bad rule. */
export class RuleError extends Error {
  readonly code = 'BAD_RULE' satisfies ErrorCode;
  override name = 'RuleError';
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

function at<T>(path: string, make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (err instanceof PatternError) throw new RuleError(path, err.message);
    throw err;
  }
}

function editDefaults(h: EditSetting): { key: string; mode: EditMode; value: string; match?: string | undefined } {
  return { key: h.key, mode: h.mode ?? 'set', value: h.value ?? '', match: h.match };
}

function compileModify(m: ModifySetting, base: string, geo: CountryLookup | undefined): ModifyRule[] | undefined {
  if (m.matchingList.length === 0) return undefined;
  return m.matchingList.map((e, index) => {
    const path = `${base}.matchingList[${index}]`;
    return {
      index,
      entry: e,
      pattern: e.pattern === undefined || e.pattern.trim() === '' ? undefined
        : at(`${path}.pattern`, () => compilePattern(e.pattern!, { caseSensitive: e.caseSensitive ?? true, allowUrl: true, geo })),
      headers: (e.headers ?? []).map((h, k) => at(`${path}.headers[${k}]`, () => compileEdit(editDefaults(h)))),
      responseHeaders: (e.responseHeaders ?? []).map((h, k) => at(`${path}.responseHeaders[${k}]`, () => compileEdit(editDefaults(h)))),
    };
  });
}

/** `base`: the JSON path of the functions object (`functions` or `hosting[i].functions`). */
export function compileNetwork(n: NetworkSetting, base: string, geo: CountryLookup | undefined): NetworkRules | undefined {
  const front = n.http.frontEnd;
  const bypassList = front.bypass.matchingList.map((e, index) => ({
    index,
    entry: e,
    instant: e.instant ?? false,
    pattern: at(`${base}.network.http.frontEnd.bypass.matchingList[${index}].pattern`, () => compilePattern(e.pattern, { caseSensitive: e.caseSensitive ?? true, allowUrl: true, geo })),
  }));
  const ck = n.cache.cachingKey;
  const keyPath = `${base}.network.cache.cachingKey`;
  const q = ck.queryString;
  if (q.keep.length > 0 && q.ignore.length > 0) throw new RuleError(`${keyPath}.queryString.keep`, 'keep and ignore exclude each other: give one of them');
  if (!q.enable && (q.keep.length > 0 || q.ignore.length > 0 || q.sort)) {
    throw new RuleError(`${keyPath}.queryString.enable`, 'the query string is not part of the key: sort, keep and ignore have nothing to act on');
  }
  ck.headers.forEach((h, k) => at(`${keyPath}.headers[${k}]`, () => {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h)) throw new PatternError(`"${h}" is not a header field name`);
  }));
  const rules: NetworkRules = {
    frontModify: compileModify(front.modify, `${base}.network.http.frontEnd.modify`, geo),
    backModify: compileModify(n.http.backEnd.modify, `${base}.network.http.backEnd.modify`, geo),
    bypass: bypassList.length === 0 ? undefined : bypassList,
    bypassNoCache: front.bypass.noCacheRequest.enable,
    key: compileKeyRule(ck),
    post: ck.postMethod.enable ? { max: ck.postMethod.bodyContentLengthMax, bodySensitive: ck.postMethod.bodySensitive } : undefined,
  };
  const none = rules.frontModify === undefined && rules.backModify === undefined && rules.bypass === undefined &&
    !rules.bypassNoCache && rules.key === undefined && rules.post === undefined;
  return none ? undefined : rules;
}
