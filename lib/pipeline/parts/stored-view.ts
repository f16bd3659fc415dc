// What the cache stages derive from a stored object's fields, computed on its first use and kept
// beside it. A stored object never changes (MemoryStore.updateMeta replaces it, a 304 merge makes
// a new one), so its parsed Cache-Control, its initial age and the fields of a full answer hold
// for every hit; per request only what depends on the time (Age) or the request is computed.
// A copy freshened by a 304 that changed no field but Date and Age takes over its predecessor's
// view with its own Date and initial age (carryView): a revalidated object is freshened on nearly
// every request, and each new view meant parsing and building the same fields again.
import { fieldsToStrip, initialAge, responseDirectives, sameFields, type ResponseDirectives } from '../../cache/policy/index.js';
import type { CacheEntryMeta, CachedObject, StoredHeaders } from '../../cache/store.js';
import { MemoryObject } from '../../cache/memory-object.js';
import { TCP_MISS } from '../../cache/policy/results.js';
import type { Transaction } from './transaction.js';
import { VIA } from './hop-by-hop.js';

/** Opt-in (SVC_DEBUG_HEADERS=1): answers name the worker that sent them, for tracing. */
export const DEBUG_WORKER = process.env.SVC_DEBUG_HEADERS === '1' ? String(process.env.SVC_WORKER_INDEX ?? '0') : undefined;

export interface StoredView {
  /** Cache-Control (or CDN-Cache-Control) as this cache applies it. */
  readonly cc: ResponseDirectives;
  /** Fields a `no-cache="..."` or `private="..."` names: not served without revalidation. */
  readonly namedFields: readonly string[];
  /** corrected_initial_age of RFC 9111 4.2.3, in seconds (renewed with the copy's times: retimeView). */
  initialAge: number;
  /**
   * The fields of a full answer as writeHead takes them (name, value, name, value ...): the
   * stored fields with Content-Length the body size (none for a 204) and our Via, then Age,
   * X-Cache and Cache-Status, whose values fullAnswerHead fills in.
   */
  readonly head: (string | string[])[];
  /** The stored answer's own Cache-Status (origin-side caches), which ours is appended to. */
  readonly cacheStatus: string | undefined;
  /**
   * Whether the copy may be compressed (encodeOk) under the host's rules it was last judged
   * under (encodeRules), from its first hit there, and then its identity answer (parts/encode.ts).
   * On the view itself, not an object of their own: one object less to read per hit.
   */
  encodeRules: object | undefined;
  encodeOk: boolean;
  identity: CachedObject | undefined;
  /** Index in `head` of the Date value (-1: the copy has no single Date), which carryView replaces. */
  readonly dateAt: number;
  /**
   * The fields of `head` but Age, X-Cache and Cache-Status as node writes them, made on the
   * first full hit over HTTP/1 (prepared-head.ts): null until then, undefined when node's
   * writeHead must write them.
   */
  preparedText: string | undefined | null;
  /**
   * The copy's conditional refresh (refresh.ts), made on its first one: the key its refreshes
   * share an origin request under, and its validators (undefined: none). Both follow from its
   * key and fields, so a revalidated copy builds, flattens and hashes no new key per request.
   */
  revalidation: { readonly joinKey: string; readonly validators: Readonly<Record<string, string>> | undefined } | undefined;
}

// Keyed by the object itself: a copy read from disk for one request is collected with its view.
// A memory copy holds its own (MemoryObject.derived): no table probe on the hot path.
const views = new WeakMap<CacheEntryMeta, StoredView>();

export function viewOf(entry: CacheEntryMeta): StoredView {
  if (entry instanceof MemoryObject) return (entry.derived as StoredView | undefined) ?? (entry.derived = makeView(entry));
  let v = views.get(entry);
  if (v === undefined) views.set(entry, (v = makeView(entry)));
  return v;
}

/** The view already made for this copy, if any (no view is made). */
function madeViewOf(entry: CacheEntryMeta): StoredView | undefined {
  return entry instanceof MemoryObject ? entry.derived as StoredView | undefined : views.get(entry);
}

function setView(entry: CacheEntryMeta, view: StoredView): void {
  if (entry instanceof MemoryObject) entry.derived = view;
  else views.set(entry, view);
}

const NO_FIELDS: readonly string[] = Object.freeze([]);

/**
 * Parsed directives by Cache-Control text, for copies without CDN-Cache-Control (what
 * responseDirectives reads): the copies of a host mostly say the same, so they share one parsed
 * object (read-only, like the whole view), which a hit's freshness test then finds in the CPU
 * cache rather than a cold one per copy. Bounded like `shared` below.
 */
const parsedCc = new Map<string, { cc: ResponseDirectives; named: readonly string[] }>();

function directivesOf(headers: StoredHeaders): { cc: ResponseDirectives; named: readonly string[] } {
  const text = headers['cache-control'];
  const key = headers['cdn-cache-control'] === undefined && typeof text === 'string' && text.length <= SHARED_LEN ? text : undefined;
  let d = key === undefined ? undefined : parsedCc.get(key);
  if (d !== undefined) return d;
  const cc = responseDirectives(headers);
  const named = fieldsToStrip(cc);
  d = { cc, named: named.length === 0 ? NO_FIELDS : named };
  if (key !== undefined) {
    if (parsedCc.size >= SHARED_MAX) parsedCc.clear();
    parsedCc.set(key, d);
  }
  return d;
}

function makeView(entry: CacheEntryMeta): StoredView {
  const { cc, named } = directivesOf(entry.headers);
  const cs = entry.headers['cache-status'];
  const head = fullHeadOf(entry);
  return {
    cc, namedFields: named, initialAge: initialAge(entry), head,
    cacheStatus: cs === undefined ? undefined : Array.isArray(cs) ? cs.join(', ') : cs, encodeRules: undefined, encodeOk: false, identity: undefined,
    dateAt: typeof entry.headers.date === 'string' ? valueAt(head, 'date') : -1, preparedText: null, revalidation: undefined,
  };
}

/** Index of the value of field `name` in a head list (names at even indexes). */
function valueAt(head: readonly (string | string[])[], name: string): number {
  for (let i = 0; i < head.length; i += 2) if (head[i] === name) return i + 1;
  return -1;
}

/** Date and Age: what may differ between a copy and its freshened one that share a view. */
const TIMES: ReadonlySet<string> = new Set(['date', 'age']);

/**
 * `to` is `from` freshened by a 304 (RFC 9111 4.3.4: the 304's fields replace the stored ones).
 * When that left every field but Date and Age as it was (the same status and size too), all
 * the view derives from those fields holds for `to`: it gets `from`'s view with its own initial
 * age and Date, and a compression decision without `from`'s identity answer (an object of
 * `from`'s times). Any other change, a new Cache-Control, ETag spelling or custom field, leaves
 * `to` to make its own view from its fields on first use. True when the view was carried over.
 */
export function carryView(from: CacheEntryMeta, to: CacheEntryMeta): boolean {
  const v = madeViewOf(from);
  if (v === undefined || madeViewOf(to) !== undefined || from.status !== to.status || from.size !== to.size) return false;
  let head = v.head;
  // The same field object (a 304 that repeated them all, Date too: mergeNotModified) needs no comparing.
  if (from.headers !== to.headers) {
    const date = to.headers.date;
    if (v.dateAt < 0 ? date !== undefined : typeof date !== 'string') return false;
    if (!sameFields(from.headers, to.headers, TIMES)) return false;
    if (v.dateAt >= 0 && head[v.dateAt] !== date) (head = head.slice())[v.dateAt] = date!;
  }
  setView(to, {
    cc: v.cc, namedFields: v.namedFields, initialAge: initialAge(to), head, cacheStatus: v.cacheStatus,
    encodeRules: v.encodeRules, encodeOk: v.encodeOk, identity: undefined, dateAt: v.dateAt,
    preparedText: head === v.head ? v.preparedText : null,
    // The same key and validators: only Date and Age may differ.
    revalidation: from.key === to.key && from.variantKey === to.variantKey ? v.revalidation : undefined,
  });
  return true;
}

/**
 * `obj` kept its fields through a 304 and got new times in place (MemoryStore.freshen,
 * MemoryObject.renew): what its view derives from the times follows, its initial age and the
 * identity answer (an object of the old times); the rest holds. Nothing for a copy without a view.
 */
export function retimeView(obj: CacheEntryMeta): void {
  const v = madeViewOf(obj);
  if (v === undefined) return;
  v.initialAge = initialAge(obj);
  v.identity = undefined;
}

/** Age in whole seconds (RFC 9111 4.2.3 current_age) at `now`. */
export function ageAt(view: StoredView, entry: CacheEntryMeta, now: number): number {
  return Math.max(0, Math.floor(view.initialAge + Math.max(0, (now - entry.cachedAt) / 1000)));
}

/** Our Via appended to the one received. */
export function viaWith(via: string | string[] | undefined): string {
  return via === undefined ? VIA : `${Array.isArray(via) ? via.join(', ') : via}, ${VIA}`;
}

/**
 * Field names and values shared by the prepared heads of all copies: most copies of a host carry
 * the same Content-Type, Cache-Control, Server ... as strings of their own (each answer's parse
 * made them). Every hit hands its head's strings to writeHead, which reads each of them; with
 * many objects a string per copy is a cache miss per field and hit, a shared one stays in the
 * CPU cache (and the copies hold less memory). Bounded: past SHARED_MAX strings it starts over
 * (values unique to a copy, an ETag, pass through it too). Only for short strings.
 */
const shared = new Map<string, string>();
const SHARED_MAX = 4096;
const SHARED_LEN = 128;

function sharedString(s: string): string {
  if (s.length > SHARED_LEN) return s;
  const held = shared.get(s);
  if (held !== undefined) return held;
  if (shared.size >= SHARED_MAX) shared.clear();
  shared.set(s, s);
  return s;
}

function fullHeadOf(entry: CacheEntryMeta): (string | string[])[] {
  const h = entry.headers;
  const out: (string | string[])[] = [];
  const withLength = entry.status !== 204; // RFC 9110 8.6
  let lengthSeen = false;
  for (const name in h) {
    // Ours replace what the origin sent.
    if (name === 'age' || name === 'via' || name === 'x-cache' || name === 'cache-status' || (name === 'x-svc-worker' && DEBUG_WORKER !== undefined)) continue;
    if (name === 'content-length') {
      lengthSeen = true;
      if (withLength) out.push(name, sharedString(String(entry.size)));
      continue;
    }
    const v = h[name]!;
    out.push(sharedString(name), typeof v === 'string' ? sharedString(v) : v);
  }
  if (withLength && !lengthSeen) out.push('content-length', sharedString(String(entry.size)));
  out.push('via', h.via === undefined ? VIA : sharedString(viaWith(h.via)));
  if (DEBUG_WORKER !== undefined) out.push('x-svc-worker', DEBUG_WORKER);
  out.push('age', '0', 'x-cache', '', 'cache-status', '');
  return out;
}

/**
 * The fields of a full answer with this answer's Age, cache result and Cache-Status (an empty
 * list: no field). writeHead has turned the fields into the header block before it returns, so
 * the value slots are simply rewritten for each answer: a hit allocates no field list.
 */
export function fullAnswerHead(view: StoredView, age: number, result: string, cacheStatus: string | string[]): (string | string[])[] {
  const head = view.head;
  const n = head.length;
  head[n - 5] = String(age);
  head[n - 3] = result;
  head[n - 1] = cacheStatus;
  return head;
}

/** Fields a 304 carries from the stored response (RFC 9110 15.4.5). */
export const NOT_MODIFIED_FIELDS = ['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary', 'last-modified'];

/**
 * Stored fields plus Age, Via and the cache result, ready for writeHead. `fromCache` false: the
 * answer to the request that fetched it, which gets no Age of ours (RFC 9111 5.1: Age implies
 * the response was not generated or validated by the origin for this request).
 */
export function answerHeaders(meta: CacheEntryMeta, headers: StoredHeaders, now: number, tx: Transaction, drop?: readonly string[],
  fromCache = true): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) out[name] = headers[name]!;
  if (drop !== undefined) for (const d of drop) delete out[d];
  if (fromCache) out.age = String(ageAt(viewOf(meta), meta, now));
  out.via = viaWith(headers.via);
  out['x-cache'] = tx.cacheResult ?? TCP_MISS;
  if (DEBUG_WORKER !== undefined) out['x-svc-worker'] = DEBUG_WORKER;
  tx.ownFields = out;
  return out;
}
