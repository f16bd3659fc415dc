// The meta of a new stored object, made from the origin's answer: by the fetch step for a GET's
// answer and by post-answer.ts for a POST answer reused for GETs (one rule for both).
import type { IncomingHttpHeaders } from 'node:http';
import type { CacheEntryMeta, CacheKey, StoredHeaders } from '../../cache/store.js';
import { computeTimes } from '../../cache/policy/freshness.js';
import { fieldsToStore } from '../../cache/policy/not-modified.js';
import { responseDirectives } from '../../cache/policy/cdn-cache-control.js';
import type { ResponseDirectives } from '../../cache/policy/cache-control.js';
import type { HostRuntime } from './host-runtime.js';
import { withKeyHeaders } from './fetch-keys.js';
import { storedVary } from './encode.js';
import { variantOf, varyOf } from './rules.js';

/**
 * Fields whose values most stored objects share with the object stored before them (one type,
 * one Cache-Control for a host's objects, one Date a second, one size for same-sized assets).
 * Each object's values are strings of its own answer, 40-50 bytes each that every stored copy
 * kept and every mark-compact marked; an answer's value equal to the last one seen is replaced by
 * that one, so the copies share one string and the answer's own dies young. One slot per field,
 * not a table: no hashing, and values that differ every time (an ETag) are not tried.
 */
const SHARED_FIELDS = ['content-type', 'cache-control', 'date', 'content-length', 'content-encoding', 'vary', 'accept-ranges', 'server'] as const;
const lastValues: string[] = SHARED_FIELDS.map(() => '');

/** Each shared field's value of `headers` that equals the last one seen becomes that string. */
function shareValues(headers: StoredHeaders): void {
  for (let i = 0; i < SHARED_FIELDS.length; i++) {
    const name = SHARED_FIELDS[i]!;
    const v = headers[name];
    if (typeof v !== 'string') continue;
    const last = lastValues[i]!;
    if (v === last) headers[name] = last;
    else lastValues[i] = v;
  }
}

/**
 * Meta of a new stored object from the origin's answer (`originHeaders`: as received). `cc`: the
 * answer's directives when the caller parsed them already (storableDirectives).
 */
export function newEntryMeta(key: CacheKey, status: number, originHeaders: StoredHeaders, reqHeaders: IncomingHttpHeaders,
  requestTime: number, cachedAt: number, host: HostRuntime, hookTtl: number | undefined,
  cc: ResponseDirectives = responseDirectives(originHeaders)): CacheEntryMeta {
  const headers = fieldsToStore(originHeaders, cachedAt, host.cachePolicy, cc);
  shareValues(headers);
  const vary = withKeyHeaders(storedVary(host.useOriginEncoding, varyOf(headers)), host.net?.key?.headers);
  // The stored fields are the answer's less those it names (no-cache="...", private="..."): its
  // directives hold for them unless it named a Cache-Control field itself.
  const storedCc = headers['cache-control'] === originHeaders['cache-control'] && headers['cdn-cache-control'] === originHeaders['cdn-cache-control']
    ? cc : responseDirectives(headers);
  const times = computeTimes({ status, headers }, { requestTime, cachedAt }, host.cachePolicy, storedCc);
  if (hookTtl !== undefined && status >= 200 && status < 300) {
    // The hook's cacheTtl is the freshness lifetime of a 2xx (document 2); the copy is kept past
    // it as long as the engine would have kept it past its own.
    const staleAt = cachedAt + hookTtl * 1000;
    times.deleteAt = staleAt + Math.max(0, times.deleteAt - times.staleAt);
    times.staleAt = staleAt;
  }
  const contentLength = Number(headers['content-length'] ?? -1);
  const meta: CacheEntryMeta = {
    key, variantKey: variantOf(vary, reqHeaders), vary, status, headers,
    requestTime, cachedAt, staleAt: times.staleAt, deleteAt: times.deleteAt,
    size: contentLength >= 0 ? contentLength : 0,
    // A memory-only host keeps on disk what is at least nonVolatileSize; of a body of unknown
    // length the store learns it on the way (volatileUpTo).
    volatile: host.volatile && (host.nonVolatileSize <= 0 || contentLength < 0 || contentLength < host.nonVolatileSize),
  };
  if (host.volatile && host.nonVolatileSize > 0 && contentLength < 0) meta.volatileUpTo = host.nonVolatileSize;
  return meta;
}
