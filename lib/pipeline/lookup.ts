// Step "lookup", the cache stage of a worker: the stored copies (memory, then the shared index),
// the freshness decision, and what follows as data on the transaction for the driver: a hit goes
// to deliver (tx.stored), a miss or a refresh to fetch (tx.plan). Methods other than GET and HEAD
// pass through; when they succeed they invalidate what they name (RFC 9111 4.4,
// parts/unsafe-invalidation.ts).
import { proxyToOrigin } from './parts/proxy.js';
import { sendError } from './parts/respond.js';
import type { Transaction } from './parts/transaction.js';
import { DONE, rerouteOf, SUSPENDED, type Next } from './parts/runtime-state.js';
import { realClock, type Clock } from './parts/clock.js';
import type { CachedObject, CacheEntryMeta, CacheKey } from '../cache/store.js';
import type { AccessControl } from '../access/access.js';
import { purgeByMethod } from './parts/purge-method.js';
import { servePost } from './parts/post-cache.js';
import { postKeyUrl } from '../cache/key.js';
import type { InvalidateKind, Invalidation } from '../cache/commands/invalidate.js';
import type { Target } from '../cache/commands/targets.js';
import type { TieredStore } from '../cache/tiered-store.js';
import type { CacheContext, Peers } from './parts/context.js';
import type { PurgeCall } from '../ipc/messages.js';
import { planFetch, resumeToFetch } from './parts/fetch-plan.js';
import { keyString } from './parts/fetch-keys.js';
import { InflightTable } from './parts/inflight.js';
import { servePieces } from './parts/pieces.js';
import { variantMatches } from './parts/rules.js';
import { viewOf } from './parts/stored-view.js';
import { QueuedCommands, type PrectrlEntry } from './parts/queued-commands.js';
import { refreshPlan } from './parts/refresh.js';
import { invalidateAfterUnsafe, type UnsafeSides } from './parts/unsafe-invalidation.js';
import { spanBase } from '../cache/policy/partial.js';
import { noteForward, noteLookup } from './parts/cache-status.js';
import {
  freshnessDecision, hitResult, requestControl, type HeaderMap, type RequestControl, TCP_MISS, TCP_NONE, TCP_REFRESH_HIT,
} from '../cache/policy/index.js';

/**
 * Step "lookup": the worker's cache stage (CacheStage.serve, reached through the runtime). It
 * returns 'deliver' (a usable stored copy: tx.stored), 'fetch' (a miss or a refresh: tx.plan),
 * DONE (answered, handed to the URL's owner, passed through), or SUSPENDED (reading the disk
 * index, a POST body, a queued command's copy: the driver resumes at the step it decides then).
 * A host with fallbacks gets its way back into the table (tx.reroute) here, before anything is
 * answered.
 */
export function lookupStep(tx: Transaction): Next {
  if (tx.host.fallbacks !== undefined && tx.reroute === undefined) tx.reroute = rerouteOf(tx);
  return tx.runtime.serve(tx);
}

/** A decision taken after a wait: the driver runs the step it names. */
function resumeAt(tx: Transaction, next: Next): void {
  if (next !== DONE && next !== SUSPENDED) tx.runtime.resume(tx, next);
}

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
  /**
   * The asynchronous commands waiting in the primary's queue (pre-cache control), as the worker
   * heard of them (lib/worker/control.ts); none when not given.
   */
  prectrl?: QueuedCommands;
}

export class CacheStage {
  private readonly ctx: CacheContext;
  /** The primary's waiting asynchronous commands (pre-cache control), kept by the worker (it hears them before its cache opens). */
  private readonly prectrl: QueuedCommands;

  constructor(private readonly opts: CacheStageOptions) {
    this.ctx = {
      store: opts.store, clock: opts.clock ?? realClock, inflight: new InflightTable(opts.maxReplayTotalBytes), maxReplayBytes: opts.maxReplayBytes, noRanges: new Set(),
      toPieces: (tx, key) => servePieces(this.ctx, tx, key, NO_METAS, requestControl(tx.req.headers as HeaderMap)),
      fetchWhole: (tx, key, mayStore) => resumeToFetch(tx, { key, mayStore, result: TCP_MISS }),
    };
    this.unsafeSides = { dropHere: (i) => this.dropMemory(i), peers: opts.peers };
    this.prectrl = opts.prectrl ?? new QueuedCommands();
  }

  get inflightCount(): number {
    return this.ctx.inflight.size;
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

  serve = (tx: Transaction): Next => {
    const method = tx.req.method;
    tx.cache = this.ctx;
    if (tx.url === '*') { proxyToOrigin(tx); return DONE; }
    if (method === 'PURGE') {
      void purgeByMethod(tx, this.ctx.store, this.opts.purgeAccess?.(), this.purgeSides).catch(() => sendError(tx.res, 500));
      return DONE;
    }
    const net = tx.host.net;
    // A fallback's pass serves the URL it routed to: the hook's key named the first one.
    if (tx.hook !== undefined && tx.fallback === undefined) return this.serveHooked(tx);
    if (method !== 'GET' && method !== 'HEAD') {
      if (method === 'POST' && net?.post !== undefined) { servePost(tx, net, net.post, this.lookupAfterBody); return SUSPENDED; }
      if (method === 'POST' && tx.host.setting.functions.network.http.frontEnd.bypass.postMethod.enable) {
        // Bypass by method: logged Bypass; UrlBypass counts only URL and no-cache bypasses.
        tx.bypass = 3;
        tx.trace?.matched(tx.host.name, 'functions.network.http.frontEnd.bypass', POST_BYPASS);
      }
      return this.passUnsafe(tx);
    }
    return this.lookup(tx, { vhost: tx.host.name, url: net?.key === undefined ? tx.url : net.key.url(tx.url) });
  };

  /** A cached POST's body was read (post-cache.ts): looked up under its key, then the driver goes on. */
  private readonly lookupAfterBody = (tx: Transaction, key: CacheKey): void => { resumeAt(tx, this.lookup(tx, key)); };

  /**
   * After the hook (hook.ts): its cacheKey is the only key (null: no cache), and what the origin
   * is asked (tx.url, tx.postBody) is its originRequest. Without a cacheKey the engine's key.
   */
  private serveHooked(tx: Transaction): Next {
    const key = tx.hook!.cacheKey;
    if (key === null) {
      // Logged Bypass like a POST under bypass.postMethod; not a URL bypass (UrlBypass).
      tx.bypass = 3;
      tx.cacheResult = TCP_MISS;
      proxyToOrigin(tx);
      return DONE;
    }
    if (key !== undefined) return this.lookup(tx, { vhost: tx.host.name, url: key });
    const net = tx.host.net;
    const url = net?.key === undefined ? tx.url : net.key.url(tx.url);
    const post = tx.postBody === undefined ? undefined : net?.post;
    return this.lookup(tx, { vhost: tx.host.name, url: post === undefined ? url : postKeyUrl(url, post.bodySensitive ? tx.postBody : undefined) });
  }

  /** Lookup under the request's cache key (cachingKey applied), then a hit, a refresh or a miss. */
  private lookup(tx: Transaction, key: CacheKey): Next {
    noteLookup(tx, key);
    const control = requestControl(tx.req.headers as HeaderMap);
    const pending = this.prectrl.size === 0 ? undefined : this.prectrl.naming(key.vhost, key.url);
    if (pending !== undefined) { this.serveUnderCommand(tx, key, control, pending); return SUSPENDED; }
    // Hot path: a memory hit goes to deliver without a Promise or an index query.
    const inMemory = this.ctx.store.memory.find(key.vhost, key.url, variantMatches, tx.req.headers);
    if (inMemory !== undefined) return this.found(tx, key, inMemory, control);
    // A URL the disk directory has never seen is a miss at once: no Promise, no index query.
    let all: CacheEntryMeta[];
    try {
      all = this.ctx.store.candidates(key);
    } catch {
      return this.miss(tx, key, control);
    }
    let meta: CacheEntryMeta | undefined;
    for (const m of all) if (variantMatches(m, tx.req.headers)) { meta = m; break; }
    if (meta === undefined) return this.miss(tx, key, control, all);
    this.ctx.store.get(key, meta.variantKey).then((obj) => {
      resumeAt(tx, obj === undefined ? this.miss(tx, key, control, all) : this.found(tx, key, obj, control));
    }, () => resumeAt(tx, this.miss(tx, key, control)));
    return SUSPENDED;
  }

  /** A request for content a queued command names: as if the command had run already. */
  private serveUnderCommand(tx: Transaction, key: CacheKey, control: RequestControl, entry: PrectrlEntry): void {
    this.ctx.store.variants(key).then((variants) => {
      const meta = variants.find((m) => variantMatches(m, tx.req.headers));
      return meta === undefined ? undefined : this.ctx.store.get(key, meta.variantKey);
    }).then((obj) => {
      if (obj === undefined) return this.miss(tx, key, control);
      // Cached (or revalidated) since the command was queued: the command is done for this copy,
      // and the queued command will leave it alone too (runInvalidation's `before`).
      if (obj.cachedAt >= entry.queuedAt) return this.found(tx, key, obj, control);
      return this.foundUnderCommand(tx, key, obj, control, entry.kind);
    }, () => this.miss(tx, key, control)).then((next) => resumeAt(tx, next));
  }

  private foundUnderCommand(tx: Transaction, key: CacheKey, obj: CachedObject, control: RequestControl, kind: InvalidateKind): Next {
    if (kind === 'hardpurge') return this.miss(tx, key, control);
    if (this.handedOff(tx)) return DONE;
    noteForward(tx, kind === 'purge' ? 'uri-miss' : 'stale');
    return planFetch(tx, refreshPlan(this.ctx, tx, key, obj, control, kind === 'purge' ? 1 : 2, control.noCache, false));
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
  private miss(tx: Transaction, key: CacheKey, control: RequestControl, stored: readonly CacheEntryMeta[] = NO_METAS): Next {
    if (control.onlyIfCached) { tx.cacheResult = TCP_MISS; tx.status = 504; sendError(tx.res, 504); return DONE; }
    if (this.handedOff(tx)) return DONE;
    // A HEAD that misses goes to the origin as it is; a later GET fills the cache.
    // Hooked, it is fetched as a GET (document 2) and stored under the hook's key.
    // RFC 9211 2.2: vary-miss when the URL has stored answers, none selected by this request.
    // (A URL with nothing stored, most misses, makes no closure for the test.)
    const fwd = stored.length > 0 && stored.some((m) => spanBase(m.variantKey) === undefined) ? 'vary-miss' : 'uri-miss';
    if (tx.req.method === 'HEAD' && tx.hook === undefined) { tx.cacheResult = TCP_MISS; noteForward(tx, fwd); proxyToOrigin(tx); return DONE; }
    // Served from stored spans, or forwarded for what they lack: pieces.ts says which.
    if (this.byPieces(tx, key, control, stored)) return planFetch(tx, { key, pieces: stored, control });
    noteForward(tx, fwd);
    return planFetch(tx, { key, mayStore: !control.noStore, result: TCP_MISS });
  }

  /**
   * A GET miss is served from pieces (pieces.ts) when the host stores partial content and the
   * client asks for a range, or spans of the object are stored already. A client's no-store, a
   * cached POST, a hooked request and an origin known not to serve ranges keep the whole fetch.
   */
  private byPieces(tx: Transaction, key: CacheKey, control: RequestControl, stored: readonly CacheEntryMeta[]): boolean {
    // A pagedesk edit is made whole (the cache serves its ranges).
    if (tx.host.pieces === undefined || tx.req.method !== 'GET' || control.noStore || tx.postBody !== undefined || tx.hook !== undefined || tx.pagedesk !== undefined) return false;
    if (tx.req.headers.range === undefined && !hasSpan(stored)) return false;
    return !this.ctx.noRanges.has(keyString(key));
  }

  private found(tx: Transaction, key: CacheKey, obj: CachedObject, control: RequestControl): Next {
    const queued = this.prectrl.size === 0 ? undefined : this.prectrl.tagging(obj);
    if (queued !== undefined) return this.foundUnderCommand(tx, key, obj, control, queued.kind);
    const now = this.ctx.clock.now();
    const view = viewOf(obj);
    const decision = freshnessDecision(obj, tx.req.headers as HeaderMap, control, now, tx.host.cachePolicy, view.cc, view.namedFields);
    if (decision.kind === 'fresh') {
      tx.cacheResult = hitResult(obj.status);
      return toDeliver(tx, obj, now, decision.strip);
    }
    if (decision.kind === 'unusable') { // only-if-cached and the copy may not be served
      tx.cacheResult = TCP_MISS; tx.status = 504; sendError(tx.res, 504); return DONE;
    }
    if (decision.kind === 'stale-while-revalidate') {
      // The refresh starts in the background (fetch), then the client gets the copy (deliver).
      tx.cacheResult = TCP_REFRESH_HIT;
      toDeliver(tx, obj, now, undefined);
      return planFetch(tx, refreshPlan(this.ctx, tx, key, obj, control, 0, false, true));
    }
    // Refresh now: a conditional request when the copy has a validator.
    if (this.handedOff(tx)) return DONE;
    noteForward(tx, decision.client ? 'request' : obj.invalidated === 1 ? 'uri-miss' : 'stale');
    return planFetch(tx, refreshPlan(this.ctx, tx, key, obj, control, obj.invalidated ?? 0, decision.client, false));
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

  /** Who drops the memory copies an unsafe method invalidates: this worker, then the others. */
  private readonly unsafeSides: UnsafeSides;

  /**
   * Unsafe methods pass through; a success invalidates the target and the Location /
   * Content-Location URIs (RFC 9111 4.4) before the client sees the answer, so its next request,
   * through whichever worker, cannot get the old copy (unsafe-invalidation.ts).
   */
  private passUnsafe(tx: Transaction): typeof DONE {
    // No cache lookup takes place for these methods (results.ts: TCP_NONE).
    tx.cacheResult = TCP_NONE;
    proxyToOrigin(tx, (status, headers) => invalidateAfterUnsafe(this.ctx, tx, status, headers, this.unsafeSides));
    return DONE;
  }
}

/** Whether a stored span (a 206) is among the URL's entries (a loop: every miss asks). */
function hasSpan(stored: readonly CacheEntryMeta[]): boolean {
  for (let i = 0; i < stored.length; i++) if (stored[i]!.status === 206) return true;
  return false;
}

/** A usable stored copy: the deliver step answers from it. */
function toDeliver(tx: Transaction, obj: CachedObject, now: number, drop: readonly string[] | undefined): 'deliver' {
  tx.stored = obj;
  tx.storedNow = now;
  tx.storedDrop = drop;
  return 'deliver';
}
