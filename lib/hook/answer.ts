// The hook's JSON answer (document 2) checked into a typed redefinition. Anything the runtime
// cannot carry out exactly is an error answer (the client gets 510), never half applied.
import { compileEdit, type HeaderEdit } from '../network/header-edit.js';
import { CACHE_RESULTS, isCacheResult, type CacheResult } from '../cache/policy/results.js';

interface HookField { key: string; value: string }

/** response.code other than 100: the transaction ends with this answer. */
interface HookEnd { code: number; body: string; headers: HookField[] }

interface OriginRedefinition {
  method: 'GET' | 'POST';
  /** Path and query on the serving host's origin. */
  url: string | undefined;
  body: Buffer | undefined;
  headers: HookField[];
}

export interface HookRedefinition {
  end: HookEnd | undefined;
  headerEdits: HeaderEdit[];
  /** undefined: the answer gave none (the engine's key); null: no cache. */
  cacheKey: string | null | undefined;
  cacheTtl: number | undefined;
  cacheResult: CacheResult | undefined;
  vhost: string | undefined;
  originRequest: OriginRedefinition | undefined;
  /** The answer as received, for `%{...}N` of the custom access log. */
  fields: Record<string, unknown>;
}

/** `svchook1` with a code other than 200, or an answer the runtime cannot carry out. */
export class HookAnswerError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function fields(v: unknown, at: string): HookField[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new HookAnswerError(`${at} must be an array of {key, value}`);
  return v.map((f, i) => {
    if (!isObject(f) || typeof f.key !== 'string' || typeof f.value !== 'string') throw new HookAnswerError(`${at}[${i}] must be {key, value} strings`);
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(f.key)) throw new HookAnswerError(`${at}[${i}].key "${f.key}" is not a header field name`);
    if (!FIELD_VALUE.test(f.value)) throw new HookAnswerError(`${at}[${i}].value holds a control character`);
    return { key: f.key.toLowerCase(), value: f.value };
  });
}

function edits(v: unknown): HeaderEdit[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new HookAnswerError('request.headers must be an array of {key, value, mode}');
  return v.map((e, i) => {
    if (!isObject(e) || typeof e.key !== 'string') throw new HookAnswerError(`request.headers[${i}] must be {key, value, mode}`);
    const mode = e.mode ?? 'set';
    if (mode !== 'set' && mode !== 'add' && mode !== 'append' && mode !== 'unset') {
      throw new HookAnswerError(`request.headers[${i}].mode must be set, add, append or unset`);
    }
    const value = mode === 'unset' ? '' : e.value;
    if (typeof value !== 'string') throw new HookAnswerError(`request.headers[${i}].value must be a string`);
    try {
      return compileEdit({ key: e.key, mode, value });
    } catch (err) {
      throw new HookAnswerError(`request.headers[${i}]: ${(err as Error).message}`);
    }
  });
}

function originRequest(v: unknown): OriginRedefinition | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new HookAnswerError('originRequest must be an object');
  // Document 2: GET or POST; any other method is treated as GET.
  const method = typeof v.method === 'string' && v.method.toUpperCase() === 'POST' ? 'POST' : 'GET';
  let url: string | undefined;
  if (v.url !== undefined && v.url !== null) {
    if (typeof v.url !== 'string' || !/^\/[\x21-\x7e]*$/.test(v.url)) throw new HookAnswerError('originRequest.url must be a path (and query) starting with /, visible ASCII');
    url = v.url;
  }
  if (v.body !== undefined && v.body !== null && typeof v.body !== 'string') throw new HookAnswerError('originRequest.body must be a string');
  const body = typeof v.body === 'string' && method === 'POST' ? Buffer.from(v.body) : undefined;
  return { method, url, body, headers: fields(v.headers, 'originRequest.headers').filter((f) => f.key !== 'host') };
}

function end(r: Record<string, unknown>): HookEnd | undefined {
  const code = r.code;
  if (code === 100) return undefined;
  if (typeof code !== 'number' || !Number.isInteger(code) || code < 200 || code > 599) {
    throw new HookAnswerError('response.code must be 100 (continue) or a final status 200-599');
  }
  if (r.body !== undefined && r.body !== null && typeof r.body !== 'string') throw new HookAnswerError('response.body must be a string');
  return { code, body: typeof r.body === 'string' ? r.body : '', headers: fields(r.headers, 'response.headers') };
}

/** Parses the hook's 200 body; throws HookAnswerError. */
export function parseHookAnswer(text: string): HookRedefinition {
  let a: unknown;
  try {
    a = JSON.parse(text);
  } catch {
    throw new HookAnswerError('the answer is not JSON');
  }
  if (!isObject(a)) throw new HookAnswerError('the answer is not a JSON object');
  if (a.name === 'svchook1') {
    if (a.code === 200) throw new HookAnswerError('an error answer (svchook1) with code 200 carries no redefinition');
    throw new HookAnswerError(`svchook1 ${String(a.code)}${typeof a.body === 'string' ? `: ${a.body}` : ''}`);
  }
  if (!isObject(a.response)) throw new HookAnswerError('response.code is missing');
  const req = a.request;
  if (req !== undefined && req !== null && !isObject(req)) throw new HookAnswerError('request must be an object');
  const key = a.cacheKey;
  if (key !== undefined && key !== null && (typeof key !== 'string' || key === '' || /[\x00-\x1f\x7f]/.test(key))) {
    throw new HookAnswerError('cacheKey must be a non-empty string without control characters, or null');
  }
  const ttl = a.cacheTtl;
  if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0)) throw new HookAnswerError('cacheTtl must be whole seconds');
  const result = a.cacheResult;
  if (result !== undefined && result !== null && !isCacheResult(result)) {
    throw new HookAnswerError(`cacheResult must be one of ${CACHE_RESULTS.join(', ')}`);
  }
  const vhost = a.vhost;
  if (vhost !== undefined && vhost !== null && typeof vhost !== 'string') throw new HookAnswerError('vhost must be a host name');
  const user = a.userData;
  if (user !== undefined && user !== null && !isObject(user)) throw new HookAnswerError('userData must be an object');
  return {
    end: end(a.response),
    headerEdits: edits(req?.headers),
    cacheKey: key as string | null | undefined,
    cacheTtl: typeof ttl === 'number' ? ttl : undefined,
    cacheResult: (result ?? undefined) as CacheResult | undefined,
    vhost: typeof vhost === 'string' && vhost !== '' ? vhost.toLowerCase() : undefined,
    originRequest: originRequest(a.originRequest),
    fields: a,
  };
}

/**
 * A `%{name}N` field of the answer: dotted members (`userData.Field`), and `name[key]` for a
 * {key, value} list (`originRequest.headers[x-custom-header]`); undefined when absent.
 */
export function hookField(a: Record<string, unknown>, path: string): string | undefined {
  let cur: unknown = a;
  for (const part of path.split('.')) {
    const m = /^([^[]*)(?:\[([^\]]*)\])?$/.exec(part);
    if (m === null || !isObject(cur)) return undefined;
    cur = cur[m[1]!];
    if (m[2] !== undefined) {
      if (!Array.isArray(cur)) return undefined;
      const want = m[2].toLowerCase();
      cur = (cur as unknown[]).find((f) => isObject(f) && typeof f.key === 'string' && f.key.toLowerCase() === want);
      cur = isObject(cur) ? cur.value : undefined;
    }
  }
  if (cur === undefined || cur === null) return undefined;
  return typeof cur === 'string' ? cur : JSON.stringify(cur);
}
