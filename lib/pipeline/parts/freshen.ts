// RFC 9111 4.3.4: a 304 freshens every stored response it selects, not only the one whose
// revalidation asked for it. Variants of a URL (Vary) that carry the same strong validator are
// the same representation: when one is revalidated, the others are fresh again too, and their
// next clients are hits instead of one more conditional request each.
import { selectedByNotModified } from '../../cache/policy/index.js';
import type { CachedObject, StoredHeaders } from '../../cache/store.js';
import { spanBase } from '../../cache/policy/partial.js';
import type { TieredStore } from '../../cache/tiered-store.js';
import type { HostRuntime } from './host-runtime.js';
import { mergeNotModified } from './rules.js';

/**
 * Updates the URL's other stored variants the 304 selects (in memory at once, on disk through
 * the writer). `answered`: the variant the revalidation was for (updated by the caller); spans of
 * partial content are left alone (each is refreshed on its own).
 */
export async function freshenVariants(store: TieredStore, answered: CachedObject, headersOf304: StoredHeaders,
  requestTime: number, now: number, host: HostRuntime): Promise<void> {
  // A copy without Vary on a host that keeps no encoded copies is the URL's one variant: the
  // index is not read for the others (a synchronous query on every 304 was a quarter of the
  // worker's time on the revalidate workload).
  if (answered.vary.length === 0 && host.compression === undefined) return;
  const all = await store.variants(answered.key);
  const seen = new Set<string>([answered.variantKey]);
  const updates: Promise<boolean>[] = [];
  for (const meta of all) {
    if (seen.has(meta.variantKey) || spanBase(meta.variantKey) !== undefined) continue;
    seen.add(meta.variantKey);
    // A purged copy is to be fetched anew, whatever the origin says of another one.
    if (!FRESHENABLE.has(meta.invalidated ?? 0) || !selectedByNotModified(meta.headers, headersOf304)) continue;
    updates.push(store.updateMeta(meta.key, meta.variantKey, mergeNotModified(meta, headersOf304, requestTime, now, host.cachePolicy)));
  }
  await Promise.all(updates);
}

/** `invalidated` values a 304 may lift: none, expired (2). */
const FRESHENABLE = new Set([0, 2]);
