// Revalidation of a stored copy (RFC 9111 4.3): the fetch plan of a refresh that the lookup step
// hands to the fetch step, and what its origin answer means for the clients waiting on it. A 304
// freshens the copy and they are answered from it, a failing origin lets those who may have it
// get the stale copy (stale-if-error, a purged copy restored); each such client enters the deliver
// step through the driver (fetch-plan.ts), and one the answer cannot serve enters the fetch step
// again for a fetch of its own. A part: lookup decides, the driver runs the steps.
import type { CachedObject, CacheKey, StoredHeaders } from '../../cache/store.js';
import { deleteAtAfter } from '../../cache/prefix.js';
import {
  forbidsStale, notModifiedMatches, notModifiedPatch, requestControl, staleIfErrorAllowed, type HeaderMap, type RequestControl,
  TCP_CLIENT_REFRESH_MISS, TCP_REF_FAIL_HIT, TCP_REFRESH_HIT, TCP_REFRESH_MISS,
} from '../../cache/policy/index.js';
import type { CacheContext } from './context.js';
import type { HostRuntime } from './host-runtime.js';
import type { SharedFetch } from './inflight.js';
import type { Transaction } from './transaction.js';
import { refreshKey } from './fetch-keys.js';
import { revalidationHeaders } from './rules.js';
import { carryView, retimeView, viewOf } from './stored-view.js';
import { noteAnswer, noteOf } from './cache-status.js';
import { resumeToDeliver, resumeToFetch, type FetchPlan } from './fetch-plan.js';

/**
 * The fetch that revalidates or re-fetches a stale (or purged, or client-refreshed) copy for this
 * client. Concurrent refreshes of one stored variant share one origin request (refreshKey);
 * misses of other variants never join it. `as`: the copy's invalidated state (1 purged: fetched
 * anew). `background`: stale-while-revalidate, `tx` is answered from the copy; the refresh is a
 * fetch in flight like the others (an invalidation retires it).
 */
export function refreshPlan(ctx: CacheContext, tx: Transaction, key: CacheKey, obj: CachedObject, control: RequestControl,
  as: number, clientAsked: boolean, background: boolean): FetchPlan {
  const purged = as === 1;
  const view = viewOf(obj);
  // A purged copy is fetched anew (no validators) under a key of its own; that one is not kept.
  const r = purged ? undefined : view.revalidation ??= { joinKey: refreshKey(obj.key, obj.variantKey, false), validators: revalidationHeaders(obj.headers) };
  const validators = r?.validators;
  const requestTime = ctx.clock.now();
  const host = tx.host;
  return {
    key,
    conditional: validators ?? {},
    joinKey: r?.joinKey ?? refreshKey(key, obj.variantKey, purged),
    keepStoredOnError: validators !== undefined,
    unreachableStatus: forbidsStale(view.cc) ? 504 : undefined,
    mayStore: !control.noStore,
    result: clientAsked ? TCP_CLIENT_REFRESH_MISS : TCP_REFRESH_MISS,
    intercept: (status, headers, f) => onRefreshAnswer(ctx, obj, status, headers, f, purged, requestTime, host, background ? tx : undefined),
    background,
  };
}

/**
 * `background`: the transaction a background refresh was made for. A refresh retired by an
 * invalidation still answers its clients but changes nothing stored: it was asked before.
 */
function onRefreshAnswer(ctx: CacheContext, obj: CachedObject, status: number, headers: StoredHeaders, f: SharedFetch,
  purged: boolean, requestTime: number, host: HostRuntime, background: Transaction | undefined): boolean {
  if (status === 304 && !purged) { notModified(ctx, obj, headers, f, requestTime, host, background); return true; }
  const failed = status === -1 || status >= 500;
  return failed && servedStale(ctx, obj, status, f, purged, host);
}

/** A 304: the copy is freshened and the waiting clients are answered from it. */
function notModified(ctx: CacheContext, obj: CachedObject, headers: StoredHeaders, f: SharedFetch, requestTime: number, host: HostRuntime,
  background: Transaction | undefined): void {
  const now = ctx.clock.now();
  const waiting = f.takeWaiting();
  const matches = notModifiedMatches(obj.headers, headers);
  // The copy's directives were parsed for the lookup (its view): the merge reuses them when the 304 keeps them.
  const patch = matches ? notModifiedPatch(obj, headers, requestTime, now, host.cachePolicy, viewOf(obj).cc) : undefined;
  // The stored copies this 304 selects (RFC 9111 4.3.4): this one when it fits, the URL's other
  // variants whether or not it does; in memory now, in the index a little later.
  const held = f.retired ? undefined : ctx.store.freshen(obj.key, obj.variantKey, patch, { headers, requestTime, receivedAt: now, policy: host.cachePolicy });
  if (patch === undefined) {
    // RFC 9111 4.3.4: a 304 with another validator is about some other representation; the
    // stored copy cannot be freshened by it, so the clients get a full fetch (coalesced).
    for (const w of waiting) {
      resumeToFetch(w, { key: obj.key, mayStore: !requestControl(w.req.headers as HeaderMap).noStore, result: w.cacheResult ?? TCP_REFRESH_MISS });
    }
    if (background !== undefined && !f.retired) resumeToFetch(background, { key: obj.key, mayStore: true, result: TCP_REFRESH_MISS, background: true });
    return;
  }
  const updated: CachedObject = held ?? { ...obj, ...patch, openBody: obj.openBody };
  // A new copy takes over the old one's view when it may; one renewed in place keeps its own.
  if (!carryView(obj, updated)) retimeView(updated);
  for (const w of waiting) {
    w.cacheResult = TCP_REFRESH_HIT;
    noteOf(w).fwdStatus = 304;
    resumeToDeliver(w, updated, now);
  }
}

/**
 * The origin cannot deliver: the old copy is served to those who may have it (a purged copy is
 * restored, to be refreshed again after the connect timeout; stale-if-error is per request); the
 * others stay waiting for the origin's answer or error. True when none is left waiting.
 */
function servedStale(ctx: CacheContext, obj: CachedObject, status: number, f: SharedFetch, purged: boolean, host: HostRuntime): boolean {
  const now = ctx.clock.now();
  const waiting = f.takeWaiting();
  const rest: Transaction[] = [];
  let served = 0;
  for (const w of waiting) {
    if (!purged && !staleIfErrorAllowed(w.req.headers as HeaderMap, obj, now, status === -1 ? 'network' : status, viewOf(obj).cc)) { rest.push(w); continue; }
    w.cacheResult = TCP_REF_FAIL_HIT;
    if (status > 0) noteAnswer(w, status, false, undefined);
    resumeToDeliver(w, obj, now);
    served++;
  }
  if (purged && served > 0 && !f.retired) {
    // The restored copy must outlive its new expiry: its old deleteAt may have passed.
    const staleAt = now + host.connectTimeoutMs;
    void ctx.store.updateMeta(obj.key, obj.variantKey, { invalidated: 0, staleAt, deleteAt: deleteAtAfter(obj, staleAt) }).catch(() => false);
  }
  if (rest.length === 0) return true;
  f.waiting = rest;
  return false;
}
