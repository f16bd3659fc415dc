// The cache stages of a worker for one transaction: lookup (memory, then the shared index),
// the freshness decision, and then a hit, a refresh, or a coalesced fetch. Methods other than
// GET and HEAD pass through; when they succeed they invalidate what they name (RFC 9111 4.4).
import type { HostRuntime } from './parts/host-runtime.js';
import { proxyToOrigin } from './parts/proxy.js';
import { sendError } from './parts/respond.js';
import type { Transaction } from './parts/transaction.js';
import { DONE, rerouteOf } from './parts/runtime-state.js';
import { realClock, type Clock } from './parts/clock.js';
import type { CachedObject, CacheEntryMeta, CacheKey, StoredHeaders } from '../cache/store.js';
import type { AccessControl } from '../access/access.js';
import { purgeByMethod } from './parts/purge-method.js';
import { servePost } from './parts/post-cache.js';
import { postKeyUrl } from '../cache/key.js';
import { memoryItems, runInvalidation, type InvalidateKind, type Invalidation } from '../cache/commands/invalidate.js';
import { editTargetsOf } from '../pagedesk/targets.js';
import type { Target } from '../cache/commands/targets.js';
import type { TieredStore } from '../cache/tiered-store.js';
import { deleteAtAfter } from '../cache/prefix.js';
import type { CacheContext, Peers } from './parts/context.js';
import type { PurgeCall } from '../ipc/messages.js';
import { deliverCached } from './deliver.js';
import { deliverNegotiated } from './parts/encode.js';
import { fetchAndStore, type FetchPlan } from './fetch.js';
import { keyString, refreshKey } from './parts/fetch-keys.js';
import { InflightTable, type SharedFetch } from './parts/inflight.js';
import { servePieces } from './parts/pieces.js';
import { mergeNotModified, revalidationHeaders, variantMatches } from './parts/rules.js';
import { viewOf } from './parts/stored-view.js';
import { QueuedCommands, type PrectrlEntry } from './parts/queued-commands.js';
import { postAnswerTee } from './parts/post-answer.js';
import { freshenVariants } from './parts/freshen.js';
import { spanBase } from '../cache/policy/partial.js';
import { noteAnswer, noteForward, noteLookup, noteOf } from './parts/cache-status.js';
import {
  forbidsStale, freshnessDecision, hitResult, invalidationTargets, notModifiedMatches, requestControl, staleIfErrorAllowed, type HeaderMap,
  type RequestControl, TCP_CLIENT_REFRESH_MISS, TCP_MISS, TCP_NONE, TCP_REF_FAIL_HIT, TCP_REFRESH_HIT, TCP_REFRESH_MISS,
} from '../cache/policy/index.js';

/**
 * Step "lookup": the worker's cache stage (CacheStage.serve, reached through the runtime), which
 * calls fetch or deliver; finish runs when the response closes. A host with fallbacks gets its
 * way back into the table (tx.reroute) here, before anything is answered.
 */
export function lookupStep(tx: Transaction): typeof DONE {
  if (tx.host.fallbacks !== undefined && tx.reroute === undefined) tx.reroute = rerouteOf(tx);
  tx.runtime.serve(tx);
  return DONE;
}

/** An asynchronous command waiting in the primary's queue (pre-cache control). */

const POST_BYPASS = { postMethod: { enable: true } };
const NO_METAS: CacheEntryMeta[] = [];

export interface CacheStageOptions {
  store: TieredStore;
  maxReplayBytes: number;
  /** Replay bytes of all fetches in flight together (see InflightTable). */
  maxReplayTotalBytes?: number;
  /** Hands a miss to the URL's owner worker (hash balance); false when this worker owns it. */
  handOff?: (tx: Transaction) => boolean;
  /** The other workers of the node: an invalidation reaches their memory tiers before its answer. */
  peers?: Peers;
  /** Who may send PURGE on the service port (the management allowList and roles). */
  purgeAccess?: () => AccessControl | undefined;
  /** The time the stages read (default the real one): tests set it instead of waiting. */
  clock?: Clock;
}

export class CacheStage {
  private readonly ctx: CacheContext;

  constructor(private readonly opts: CacheStageOptions) {
    this.ctx = {
      store: opts.store, clock: opts.clock ?? realClock, inflight: new InflightTable(opts.maxReplayTotalBytes), maxReplayBytes: opts.maxReplayBytes, noRanges: new Set(),
      toPieces: (tx, key) => servePieces(this.ctx, tx, key, NO_METAS, requestControl(tx.req.headers as HeaderMap)),
      fetchWhole: (tx, key, mayStore) => fetchAndStore(this.ctx, tx, { key, mayStore, result: TCP_MISS }),
    };
  }

  get inflightCount(): number {
    return this.ctx.inflight.size;
  }

  private readonly prectrl = new QueuedCommands();

  /** The primary's queue of asynchronous commands changed (parts/queued-commands.ts). */
  setPrectrl(entries: PrectrlEntry[]): void {
    // A fetch under way began before the command: its answer is the content the command
    // names, so nobody may join it (nor may it land fresh), as with a command that ran.
    this.prectrl.set(entries, (e) => { void this.settle(e.target); });
  }

  /** Waits for every fetch under a URL prefix to be over (a removed host's content goes after). */
  settledUnder(vhost: string, prefix: string): Promise<void> {
    return this.ctx.inflight.settledUnder(vhost, prefix);
  }

  /**
   * Before an invalidation changes the index: the fetches of its target in flight here retire
   * (they store nothing) and the writes already ending land, so the invalidation sees them.
   */
  settle(t: Target): Promise<void> {
    if (t.tag !== undefined) return this.ctx.inflight.retireTagged(t.vhost, t.tag);
    return this.ctx.inflight.retire(t.vhost, t.prefix, t.wildcard);
  }

  /** Whether an origin fetch of the URL is under way in this worker (fileinfo's Downloader-Count). */
  fetching(vhost: string, url: string): boolean {
    return this.ctx.inflight.peek(keyString({ vhost, url })) !== undefined;
  }

  serve = (tx: Transaction): void => {
    const method = tx.req.method;
    if (tx.url === '*') { proxyToOrigin(tx); return; }
    if (method === 'PURGE') {
      void purgeByMethod(tx, this.ctx.store, this.opts.purgeAccess?.(), this.purgeSides).catch(() => sendError(tx.res, 500));
      return;
    }
    const net = tx.host.net;
    // A fallback's pass serves the URL it routed to: the hook's key named the first one.
    if (tx.hook !== undefined && tx.fallback === undefined) { this.serveHooked(tx); return; }
    if (method !== 'GET' && method !== 'HEAD') {
      if (method === 'POST' && net?.post !== undefined) { servePost(tx, net, net.post, this.lookup); return; }
      if (method === 'POST' && tx.host.setting.functions.network.http.frontEnd.bypass.postMethod.enable) {
        // Bypass by method: logged Bypass; UrlBypass counts only URL and no-cache bypasses.
        tx.bypass = 3;
        tx.trace?.matched(tx.host.name, 'functions.network.http.frontEnd.bypass', POST_BYPASS);
      }
      this.passUnsafe(tx);
      return;
    }
    this.lookup(tx, { vhost: tx.host.name, url: net?.key === undefined ? tx.url : net.key.url(tx.url) });
  };

  /**
   * After the hook (hook.ts): its cacheKey is the only key (null: no cache), and what the origin
   * is asked (tx.url, tx.postBody) is its originRequest. Without a cacheKey the engine's key.
   */
  private serveHooked(tx: Transaction): void {
    const key = tx.hook!.cacheKey;
    if (key === null) {
      // Logged Bypass like a POST under bypass.postMethod; not a URL bypass (UrlBypass).
      tx.bypass = 3;
      tx.cacheResult = TCP_MISS;
      proxyToOrigin(tx);
      return;
    }
    if (key !== undefined) { this.lookup(tx, { vhost: tx.host.name, url: key }); return; }
    const net = tx.host.net;
    const url = net?.key === undefined ? tx.url : net.key.url(tx.url);
    const post = tx.postBody === undefined ? undefined : net?.post;
    this.lookup(tx, { vhost: tx.host.name, url: post === undefined ? url : postKeyUrl(url, post.bodySensitive ? tx.postBody : undefined) });
  }

  /** Lookup under the request's cache key (cachingKey applied), then a hit, a refresh or a miss. */
  private readonly lookup = (tx: Transaction, key: CacheKey): void => {
    noteLookup(tx, key);
    const control = requestControl(tx.req.headers as HeaderMap);
    const pending = this.prectrl.size === 0 ? undefined : this.prectrl.naming(key.vhost, key.url);
    if (pending !== undefined) { this.serveUnderCommand(tx, key, control, pending); return; }
    // Hot path: a memory hit is answered without a Promise or an index query.
    const inMemory = this.ctx.store.memory.find(key.vhost, key.url, variantMatches, tx.req.headers);
    if (inMemory !== undefined) { this.found(tx, key, inMemory, control); return; }
    // A URL the disk directory has never seen is a miss at once: no Promise, no index query.
    let all: CacheEntryMeta[];
    try {
      all = this.ctx.store.candidates(key);
    } catch {
      this.miss(tx, key, control);
      return;
    }
    let meta: CacheEntryMeta | undefined;
    for (const m of all) if (variantMatches(m, tx.req.headers)) { meta = m; break; }
    if (meta === undefined) { this.miss(tx, key, control, all); return; }
    this.ctx.store.get(key, meta.variantKey).then((obj) => {
      if (obj === undefined) this.miss(tx, key, control, all);
      else this.found(tx, key, obj, control);
    }, () => this.miss(tx, key, control));
  };

  /** A request for content a queued command names: as if the command had run already. */
  private serveUnderCommand(tx: Transaction, key: CacheKey, control: RequestControl, entry: PrectrlEntry): void {
    this.ctx.store.variants(key).then((variants) => {
      const meta = variants.find((m) => variantMatches(m, tx.req.headers));
      return meta === undefined ? undefined : this.ctx.store.get(key, meta.variantKey);
    }).then((obj) => {
      if (obj === undefined) { this.miss(tx, key, control); return; }
      // Cached (or revalidated) since the command was queued: the command is done for this copy,
      // and the queued command will leave it alone too (runInvalidation's `before`).
      if (obj.cachedAt >= entry.queuedAt) { this.found(tx, key, obj, control); return; }
      this.foundUnderCommand(tx, key, obj, control, entry.kind);
    }, () => this.miss(tx, key, control));
  }

  private foundUnderCommand(tx: Transaction, key: CacheKey, obj: CachedObject, control: RequestControl, kind: InvalidateKind): void {
    if (kind === 'hardpurge') { this.miss(tx, key, control); return; }
    if (this.handedOff(tx)) return;
    noteForward(tx, kind === 'purge' ? 'uri-miss' : 'stale');
    this.refresh(tx, key, obj, control, kind === 'purge' ? 1 : 2);
  }

  /**
   * Hash balance: handed to the URL's owner worker. A cached POST stays here: its body was read
   * already, and the owner would read the URL's key without it. A hooked request goes to the
   * owner of the hook's cacheKey with its redefinition (hook-hand-off.ts): not hooked again there.
   */
  private handedOff(tx: Transaction): boolean {
    return !tx.fromSibling && tx.postBody === undefined && this.opts.handOff?.(tx) === true;
  }

  /** `stored`: the URL's entries (spans of a partially stored object among them). */
  private miss(tx: Transaction, key: CacheKey, control: RequestControl, stored: readonly CacheEntryMeta[] = NO_METAS): void {
    if (control.onlyIfCached) { tx.cacheResult = TCP_MISS; tx.status = 504; sendError(tx.res, 504); return; }
    if (this.handedOff(tx)) return;
    // A HEAD that misses goes to the origin as it is; a later GET fills the cache.
    // Hooked, it is fetched as a GET (document 2) and stored under the hook's key.
    // RFC 9211 2.2: vary-miss when the URL has stored answers, none selected by this request.
    const fwd = stored.some((m) => spanBase(m.variantKey) === undefined) ? 'vary-miss' : 'uri-miss';
    if (tx.req.method === 'HEAD' && tx.hook === undefined) { tx.cacheResult = TCP_MISS; noteForward(tx, fwd); proxyToOrigin(tx); return; }
    // Served from stored spans, or forwarded for what they lack: pieces.ts says which.
    if (this.byPieces(tx, key, control, stored)) { servePieces(this.ctx, tx, key, stored, control); return; }
    noteForward(tx, fwd);
    fetchAndStore(this.ctx, tx, { key, mayStore: !control.noStore, result: TCP_MISS });
  }

  /**
   * A GET miss is served from pieces (pieces.ts) when the host stores partial content and the
   * client asks for a range, or spans of the object are stored already. A client's no-store, a
   * cached POST, a hooked request and an origin known not to serve ranges keep the whole fetch.
   */
  private byPieces(tx: Transaction, key: CacheKey, control: RequestControl, stored: readonly CacheEntryMeta[]): boolean {
    // A pagedesk edit is made whole (the cache serves its ranges).
    if (tx.host.pieces === undefined || tx.req.method !== 'GET' || control.noStore || tx.postBody !== undefined || tx.hook !== undefined || tx.pagedesk !== undefined) return false;
    if (tx.req.headers.range === undefined && !stored.some((m) => m.status === 206)) return false;
    return !this.ctx.noRanges.has(keyString(key));
  }

  private found(tx: Transaction, key: CacheKey, obj: CachedObject, control: RequestControl): void {
    const queued = this.prectrl.size === 0 ? undefined : this.prectrl.tagging(obj);
    if (queued !== undefined) { this.foundUnderCommand(tx, key, obj, control, queued.kind); return; }
    const now = this.ctx.clock.now();
    const view = viewOf(obj);
    const decision = freshnessDecision(obj, tx.req.headers as HeaderMap, control, now, tx.host.cachePolicy, view.cc, view.namedFields);
    if (decision.kind === 'fresh') {
      tx.cacheResult = hitResult(obj.status);
      deliverNegotiated(this.ctx.store, tx, obj, now, decision.strip, deliverCached);
      return;
    }
    if (decision.kind === 'unusable') { // only-if-cached and the copy may not be served
      tx.cacheResult = TCP_MISS; tx.status = 504; sendError(tx.res, 504); return;
    }
    if (decision.kind === 'stale-while-revalidate') {
      tx.cacheResult = TCP_REFRESH_HIT;
      deliverNegotiated(this.ctx.store, tx, obj, now, undefined, deliverCached);
      this.refresh(tx, key, obj, control, 0, false, true);
      return;
    }
    // Refresh now: a conditional request when the copy has a validator.
    if (this.handedOff(tx)) return;
    noteForward(tx, decision.client ? 'request' : obj.invalidated === 1 ? 'uri-miss' : 'stale');
    this.refresh(tx, key, obj, control, obj.invalidated ?? 0, decision.client);
  }

  /**
   * Revalidates or re-fetches a stale (or purged, or client-refreshed) copy for this client.
   * Concurrent refreshes of one stored variant share one origin request (refreshKey); misses
   * of other variants never join it. `background`: stale-while-revalidate, `tx` is answered
   * already; the refresh is a fetch in flight like the others (an invalidation retires it).
   */
  private refresh(tx: Transaction, key: CacheKey, obj: CachedObject, control: RequestControl, as: number = obj.invalidated ?? 0,
    clientAsked = control.noCache, background = false): void {
    const purged = as === 1;
    const validators = purged ? undefined : revalidationHeaders(obj.headers);
    const requestTime = this.ctx.clock.now();
    const host = tx.host;
    const plan: FetchPlan = {
      key,
      conditional: validators ?? {},
      joinKey: refreshKey(key, obj.variantKey, purged),
      keepStoredOnError: validators !== undefined,
      unreachableStatus: forbidsStale(viewOf(obj).cc) ? 504 : undefined,
      mayStore: !control.noStore,
      result: clientAsked ? TCP_CLIENT_REFRESH_MISS : TCP_REFRESH_MISS,
      intercept: (status, headers, f) => this.onRefreshAnswer(obj, status, headers, f, purged, requestTime, host, background ? tx : undefined),
      background,
    };
    fetchAndStore(this.ctx, tx, plan);
  }

  /**
   * `background`: the transaction a background refresh was made for. A refresh retired by an
   * invalidation still answers its clients but changes nothing stored: it was asked before.
   */
  private onRefreshAnswer(obj: CachedObject, status: number, headers: StoredHeaders, f: SharedFetch,
    purged: boolean, requestTime: number, host: HostRuntime, background: Transaction | undefined): boolean {
    const now = this.ctx.clock.now();
    if (status === 304 && !purged) {
      const waiting = f.takeWaiting();
      // The other variants this 304 selects (RFC 9111 4.3.4), whether or not it fits this one.
      if (!f.retired) void freshenVariants(this.ctx.store, obj, headers, requestTime, now, host).catch(() => undefined);
      if (!notModifiedMatches(obj.headers, headers)) {
        // RFC 9111 4.3.4: a 304 with another validator is about some other representation; the
        // stored copy cannot be freshened by it, so the clients get a full fetch (coalesced).
        for (const w of waiting) {
          fetchAndStore(this.ctx, w, { key: obj.key, mayStore: !requestControl(w.req.headers as HeaderMap).noStore, result: w.cacheResult ?? TCP_REFRESH_MISS });
        }
        if (background !== undefined && !f.retired) fetchAndStore(this.ctx, background, { key: obj.key, mayStore: true, result: 'TCP_REFRESH_MISS', background: true });
        return true;
      }
      const patch = mergeNotModified(obj, headers, requestTime, now, host.cachePolicy);
      if (!f.retired) void this.ctx.store.updateMeta(obj.key, obj.variantKey, patch).catch(() => false);
      const updated: CachedObject = { ...obj, ...patch, openBody: obj.openBody };
      for (const w of waiting) {
        w.cacheResult = TCP_REFRESH_HIT;
        noteOf(w).fwdStatus = 304;
        deliverNegotiated(this.ctx.store, w, updated, now, undefined, deliverCached);
      }
      return true;
    }
    const failed = status === -1 || status >= 500;
    if (!failed) return false;
    // The origin cannot deliver: the old copy is served to those who may have it (a purged copy
    // is restored, to be refreshed again after the connect timeout; stale-if-error is per
    // request); the others get the origin's answer or error.
    const waiting = f.takeWaiting();
    const rest: Transaction[] = [];
    let served = 0;
    for (const w of waiting) {
      if (!purged && !staleIfErrorAllowed(w.req.headers as HeaderMap, obj, now, status === -1 ? 'network' : status, viewOf(obj).cc)) { rest.push(w); continue; }
      w.cacheResult = TCP_REF_FAIL_HIT;
      if (status > 0) noteAnswer(w, status, false, undefined);
      deliverNegotiated(this.ctx.store, w, obj, now, undefined, deliverCached);
      served++;
    }
    if (purged && served > 0 && !f.retired) {
      // The restored copy must outlive its new expiry: its old deleteAt may have passed.
      const staleAt = now + host.connectTimeoutMs;
      void this.ctx.store.updateMeta(obj.key, obj.variantKey, { invalidated: 0, staleAt, deleteAt: deleteAtAfter(obj, staleAt) }).catch(() => false);
    }
    if (rest.length === 0) return true;
    f.waiting = rest;
    return false;
  }

  /**
   * An invalidation here or in another worker: the memory copies it names go, and this worker's
   * fetches of them in flight retire (InflightTable.retire). A write already ending puts its
   * copy in memory as expired, unless it did already, and then it is among those dropped here.
   */
  dropMemory(i: Invalidation): void {
    const memory = this.ctx.store.memory;
    if (i.tag !== undefined) {
      for (const o of memory.listTagged(i.vhost, i.tag)) memory.deleteSync(o.key, o.variantKey);
      void this.ctx.inflight.retireTagged(i.vhost, i.tag);
      return;
    }
    if (i.prefix) memory.deleteByPrefix(i.vhost, i.url);
    else memory.deleteSync({ vhost: i.vhost, url: i.url });
    void this.ctx.inflight.retire(i.vhost, i.url, i.prefix);
  }

  /** A PURGE on the service port: as a management command, by this worker. */
  private readonly purgeSides = {
    settle: async (targets: Target[]): Promise<void> => {
      await Promise.all([...targets.map((t) => this.settle(t)), this.opts.peers?.settle(targets)]);
    },
    announce: async (items: Invalidation[]): Promise<void> => { await this.opts.peers?.invalidated(items); },
    recognized: (call: PurgeCall): void => { this.opts.peers?.purgeRecognized(call); },
  };

  /**
   * Unsafe methods pass through; a success invalidates the target and the Location /
   * Content-Location URIs (RFC 9111 4.4) before the client sees the answer, so its next request,
   * through whichever worker, cannot get the old copy: every worker has dropped its memory copies
   * by then. Invalidated means stale: the next use revalidates (a conditional request), it does
   * not throw the copy away.
   */
  private passUnsafe(tx: Transaction): void {
    // No cache lookup takes place for these methods (results.ts: TCP_NONE).
    tx.cacheResult = TCP_NONE;
    proxyToOrigin(tx, async (status, headers) => {
      if (status < 200 || status >= 400) return undefined;
      const named = invalidationTargets(tx.req.method!, status, tx.url, headers as StoredHeaders, tx.req.headers.host ?? tx.host.name);
      if (named.length === 0) return undefined;
      const rule = tx.host.net?.key;
      const urls = rule === undefined ? named : named.map(rule.url);
      const vhost = tx.host.name;
      // Rows marked and the invalidation logged in one transaction: a copy of these URLs fetched
      // before now that commits later (any worker's writer thread) lands already stale.
      const at = Date.now();
      try {
        await this.ctx.store.disk.invalidateUrls(vhost, urls, at);
      } catch {
        // The index is unavailable (busy beyond its timeout): the memory copies still go.
      }
      const items: Invalidation[] = urls.map((url) => ({ vhost, url, prefix: false }));
      // The source's pagedesk edits go stale with it (they revalidate through the source).
      const keyword = tx.host.pagedesk?.keyword;
      if (keyword !== undefined) {
        const edits = editTargetsOf(vhost, urls, keyword);
        await runInvalidation(this.ctx.store, 'expire', edits).catch(() => undefined);
        items.push(...memoryItems(edits));
      }
      for (const i of items) this.dropMemory(i);
      await this.opts.peers?.invalidated(items);
      // A POST whose answer names its own URI as Content-Location: stored for later GETs.
      return postAnswerTee(this.ctx, tx, status, headers, at);
    });
  }
}
