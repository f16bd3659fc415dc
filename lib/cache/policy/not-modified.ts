// What a 304 does to the stored responses it selects (RFC 9111 4.3.4): their new fields and
// times. Here, below the stores, because two places apply it: the request path to the copy it
// revalidated and to the other variants the memory tier holds, and the disk writer thread to the
// index rows of the URL (lib/cache/disk/writer-freshen.ts), so the request path reads no index.
import type { CacheEntryMeta, NotModifiedPatch, StoredHeaders } from '../store.js';
import { responseDirectives } from './cdn-cache-control.js';
import type { ResponseDirectives } from './cache-control.js';
import { mergeNotModified, notModifiedMatches, selectedByNotModified } from './conditional.js';
import { computeTimes } from './freshness.js';
import { formatHttpDate, sameFieldValue, type HeaderMap } from './headers.js';
import type { CachePolicyOptions } from './options.js';
import { spanBase } from './partial.js';
import { storableFields } from './storable.js';

/**
 * Fields of an origin response as stored: without those the cache must not keep (private="...",
 * no-cache="...") and with a Date when the origin sent none (RFC 9110 6.6.1: the time it was
 * received), so a later hit does not stamp the time of the hit.
 */
export function fieldsToStore(headers: StoredHeaders, receivedAt: number, opts: CachePolicyOptions,
  cc: ResponseDirectives = responseDirectives(headers)): StoredHeaders {
  const out = storableFields(headers, opts, cc);
  if (out.date !== undefined) return out;
  return { ...out, date: formatHttpDate(receivedAt) };
}

/**
 * The stored entry's new fields and times after a 304 received at `cachedAt`. `entryCc`: the
 * entry's own directives (responseDirectives of its fields) when the caller has them parsed
 * already; they are used when the 304 left Cache-Control and CDN-Cache-Control as they were.
 */
export function notModifiedPatch(entry: Pick<CacheEntryMeta, 'status' | 'headers'>, headersOf304: StoredHeaders, requestTime: number,
  cachedAt: number, opts: CachePolicyOptions, entryCc?: ResponseDirectives): NotModifiedPatch {
  // The 304 is a message received now: without a Date it gets one (RFC 9110 6.6.1), which also
  // keeps Age right since requestTime / cachedAt restart with the revalidation.
  const merged = mergeNotModified(entry.headers, headersOf304);
  const cc = entryCc !== undefined && sameFieldValue(merged['cache-control'], entry.headers['cache-control'])
    && sameFieldValue(merged['cdn-cache-control'], entry.headers['cdn-cache-control'])
    ? entryCc : responseDirectives(merged);
  const headers = fieldsToStore(merged, cachedAt, opts, cc);
  // Directives parsed once, unless storing dropped a Cache-Control field it names.
  const storedCc = headers['cache-control'] === merged['cache-control'] && headers['cdn-cache-control'] === merged['cdn-cache-control']
    ? cc : responseDirectives(headers);
  const times = computeTimes({ status: entry.status, headers }, { requestTime, cachedAt }, opts, storedCc);
  return { headers, requestTime, cachedAt, staleAt: times.staleAt, deleteAt: times.deleteAt, invalidated: 0 };
}

/**
 * Whether a 304 freshens this stored variant of the URL. Never a purged one (1, or 3 hard-purged):
 * it is fetched anew, whatever the origin says; an expired one (2) it may. The one it answered:
 * when the 304 is about it (notModifiedMatches). Any other: when it selects it by an identical
 * strong validator (selectedByNotModified), unless it is a span of partial content (each is
 * refreshed on its own).
 */
export function freshenedBy304(variant: { variantKey: string; invalidated?: number | undefined; headers: HeaderMap },
  answeredVariant: string, headersOf304: HeaderMap): boolean {
  const inv = variant.invalidated ?? 0;
  if (inv !== 0 && inv !== 2) return false;
  if (variant.variantKey === answeredVariant) return notModifiedMatches(variant.headers, headersOf304);
  return spanBase(variant.variantKey) === undefined && selectedByNotModified(variant.headers, headersOf304);
}
