// Cache-Status (RFC 9211) on every answer of a virtual host: what this cache did with the request,
// appended to the members an origin-side cache already wrote. The stages note what only they
// know (why a request went forward, what the origin answered a joined fetch, whether the answer
// was stored) on the transaction; the member is made where the head is written (TxResponse,
// H2Response: every answer passes there, error answers included), so no answering path can
// forget it. Only the hit path writes its own (deliver.ts, into the stored view's prepared head),
// to keep a hit free of field copies. What the stages do not note is read off the record: a
// bypass, an unsafe method, an origin exchange, a hit result.
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import { appendCacheStatus, cacheNameItem, cacheStatusMember, ttlSeconds, type CacheStatusFwd, type CacheStatusParams } from '../../cache/policy/cache-status.js';
import type { CacheKey } from '../../cache/store.js';
import { isHitResult } from '../../cache/policy/results.js';
import type { ResolvedHost } from '../../setting/types.js';
import type { TransactionRecord } from './transaction.js';
import type { CacheStatusNote, CacheStatusRuntime } from './shapes.js';
import type { StoredView } from './stored-view.js';



export function cacheStatusRuntime(host: ResolvedHost): CacheStatusRuntime | undefined {
  const c = host.functions.network.cache.cacheStatus;
  return c.enable ? { item: cacheNameItem(c.name), key: c.key } : undefined;
}

export function noteOf(tx: TransactionRecord): CacheStatusNote {
  return (tx.cacheStatus ??= {});
}

/** Lookup starts (again, after a fallback routed the request elsewhere): nothing known yet. */
export function noteLookup(tx: TransactionRecord, key: CacheKey): void {
  tx.cacheStatus = tx.host?.cacheStatus?.key === true ? { key: `${key.vhost}${key.url}` } : undefined;
}

/** The request goes forward for this reason. */
export function noteForward(tx: TransactionRecord, fwd: CacheStatusFwd): void {
  noteOf(tx).fwd = fwd;
}

/** An answer from the origin reaches this client: its status, whether it is stored, and when it goes stale. */
export function noteAnswer(tx: TransactionRecord, status: number, stored: boolean, staleAt: number | undefined): void {
  const n = noteOf(tx);
  n.fwdStatus = status;
  n.stored = stored;
  if (staleAt !== undefined) n.ttl = ttlSeconds(staleAt, Date.now());
}

/** A client that had joined a fetch in flight is sent to the origin on its own after all. */
export function noteAlone(tx: TransactionRecord): void {
  const n = tx.cacheStatus;
  if (n?.collapsed === true) n.collapsed = false;
}

/** Why the request went forward when no stage said (undefined: it did not go forward). */
function forwardOf(tx: TransactionRecord): CacheStatusFwd | undefined {
  if (tx.origin === undefined) return undefined;
  if (tx.bypass === 1 || tx.bypass === 2 || (tx.bypass === 3 && tx.hook?.cacheKey === null)) return 'bypass';
  const m = tx.req.method;
  if (m !== 'GET' && m !== 'HEAD' && tx.postBody === undefined) return 'method';
  return 'miss';
}

/**
 * The parameters of this answer's member, in one object the caller reads at once and lets go
 * (cacheStatusMember reads it synchronously): every answer of a host makes one, so it is reused.
 */
const params: CacheStatusParams = {};

function paramsOf(tx: TransactionRecord, ttl: number | undefined): CacheStatusParams {
  const n = tx.cacheStatus;
  const hit = isHitResult(tx.cacheResult);
  const fwd = n?.fwd ?? (hit ? undefined : forwardOf(tx));
  const p = params;
  // Noted at lookup only when the host asks for it.
  p.key = n?.key;
  p.hit = undefined; p.fwd = undefined; p.fwdStatus = undefined; p.stored = undefined; p.collapsed = undefined; p.ttl = undefined;
  if (fwd === undefined) {
    if (hit) { p.hit = true; p.ttl = n?.ttl ?? ttl; }
    return p;
  }
  p.fwd = fwd;
  const status = n?.fwdStatus ?? tx.origin?.status ?? 0;
  if (status > 0) p.fwdStatus = status;
  p.stored = n?.stored;
  p.collapsed = n?.collapsed;
  p.ttl = n?.ttl ?? ttl;
  return p;
}

/**
 * Every member made without a key parameter, kept and reused: the answers of a host mostly say
 * the same within a ttl second, and a hit on one of many copies (hit-mix: 10,000, each with its
 * own ttl) finds the text another copy with that ttl made. One table for every answer: by name
 * item, then shape (the parameters but ttl, as a number: shapeOf), then ttl second. A plain hit
 * of a copy whose origin sent members of its own is kept whole (those members and ours) under
 * their text as the shape. Bounded: past MEMO_MAX values the table starts over. In front of it
 * the last value given: one object hit over and over (hit-1k) needs no table probe.
 */
const memo = new Map<string, Map<number | string, Map<number, string>>>();
const MEMO_MAX = 8192;
let memoSize = 0;
let lastItem = '';
let lastShape: number | string = -1;
let lastTtl = NaN;
let lastValue = '';
/** The shapes of the last item looked up (a host's name item rarely changes): one Map get less per member. */
let itemMemo: Map<number | string, Map<number, string>> | undefined;
/** The ttl key of a member without one. */
const NO_TTL = Number.MIN_SAFE_INTEGER;

const FWDS: readonly (CacheStatusFwd | undefined)[] = [undefined, 'bypass', 'method', 'uri-miss', 'vary-miss', 'miss', 'request', 'stale', 'partial'];
const tri = (b: boolean | undefined): number => (b === undefined ? 0 : b ? 1 : 2);

/** The parameters but ttl and key as one number (fwdStatus is three digits: RFC 9110 15). */
function shapeOf(p: CacheStatusParams): number {
  return (p.hit === true ? 1 : 0) + 2 * FWDS.indexOf(p.fwd) + 18 * tri(p.stored) + 54 * tri(p.collapsed) + 162 * (p.fwdStatus ?? 0);
}

/** The member of `p` (appended to `own`, a copy's own members, when given), made once per item, shape and ttl. */
function remembered(item: string, shape: number | string, p: CacheStatusParams, own: string | undefined): string {
  const ttl = p.ttl ?? NO_TTL;
  if (ttl === lastTtl && shape === lastShape && item === lastItem) return lastValue;
  let byShape = item === lastItem ? itemMemo : memo.get(item);
  if (byShape === undefined) memo.set(item, (byShape = new Map()));
  let byTtl = byShape.get(shape);
  if (byTtl === undefined) byShape.set(shape, (byTtl = new Map()));
  let value = byTtl.get(ttl);
  if (value === undefined) {
    value = own === undefined ? cacheStatusMember(item, p) : appendCacheStatus(own, cacheStatusMember(item, p));
    if (++memoSize > MEMO_MAX) { memo.clear(); memoSize = 1; memo.set(item, (byShape = new Map())); byShape.set(shape, (byTtl = new Map())); }
    byTtl.set(ttl, value);
  }
  lastItem = item; itemMemo = byShape; lastShape = shape; lastTtl = ttl; lastValue = value;
  return value;
}

/** cacheStatusMember, from the table unless the member has a key parameter (one per URL). */
function memberOf(item: string, p: CacheStatusParams): string {
  return p.key !== undefined ? cacheStatusMember(item, p) : remembered(item, shapeOf(p), p, undefined);
}

/** The parameters of a plain hit, reused like `params`. */
const plainParams: CacheStatusParams = { hit: true, ttl: 0 };
const PLAIN_HIT = shapeOf(plainParams);

/**
 * The field for a hit's prepared head (stored-view.ts): the stored answer's members and ours; an
 * empty list (node writes no field for it) when there is neither. A plain hit (no key parameter,
 * no forward noted) says the same for every request with the same ttl second: its text comes
 * from the table (remembered).
 */
export function hitCacheStatus(tx: TransactionRecord, view: StoredView, ttl: number): string | string[] {
  const cs = tx.host?.cacheStatus;
  if (cs === undefined) return view.cacheStatus ?? NONE;
  const note = tx.cacheStatus;
  if (cs.key || note !== undefined || !isHitResult(tx.cacheResult)) {
    // This answer's ttl, not one an earlier stage noted (a refresh's answer before a resumed hit).
    if (note !== undefined) note.ttl = ttl;
    return appendCacheStatus(view.cacheStatus, memberOf(cs.item, paramsOf(tx, ttl)));
  }
  plainParams.ttl = ttl;
  const own = view.cacheStatus;
  return remembered(cs.item, own ?? PLAIN_HIT, plainParams, own);
}
const NONE: string[] = [];

/**
 * The fields of an answer with our member appended: a copy (the caller's object may be a stored
 * one), unless they are the answer's own (tx.ownFields). A flat list is a hit's prepared head,
 * which has it; a relayed answer has the owner's.
 */
export function withCacheStatus<F extends OutgoingHttpHeaders | readonly OutgoingHttpHeader[] | readonly string[] | undefined>(tx: TransactionRecord, fields: F): F | OutgoingHttpHeaders {
  const cs = tx.host?.cacheStatus;
  if (cs === undefined || Array.isArray(fields) || tx.cacheStatus?.relayed === true) return fields;
  const out: OutgoingHttpHeaders = fields !== undefined && fields === tx.ownFields ? fields as OutgoingHttpHeaders : { ...(fields as OutgoingHttpHeaders | undefined) };
  out['cache-status'] = appendCacheStatus(out['cache-status'], memberOf(cs.item, paramsOf(tx, undefined)));
  return out;
}
