// The object a memory store holds (memory-store.ts): the meta and the whole body in one Buffer,
// handed to every hit as it is, so a hit allocates nothing. A file of its own so that the store's
// LRU and the object's shape are read apart.
import { Readable } from 'node:stream';
import type { CacheEntryMeta, CacheKey, CachedObject, NotModifiedPatch, StoredHeaders } from './store.js';

/** A stream of `body[start..end]` (inclusive) as one chunk: the body is already in memory. */
function bufferStream(body: Buffer, start?: number, end?: number): Readable {
  const s = start ?? 0;
  const e = end === undefined ? body.length : Math.min(end + 1, body.length);
  return Readable.from([body.subarray(s, Math.max(s, e))], { objectMode: false });
}

/**
 * The vary of every object whose answer has none (most): one array for all, so a hit's variant
 * test reads a hot one, not a cold empty array per copy. Frozen: no reader may change it.
 */
const NO_VARY = Object.freeze([]) as unknown as string[];

/**
 * A stored entry. Callers get this very object on every hit, so they must treat it as read-only;
 * updateMeta replaces it with a new one rather than mutating it under a reader. One change is
 * made in place, by the store only: a 304 that left every field as it was renews the times
 * (renew), as if the answer had just been received again. A revalidated object is freshened on
 * nearly every request, and a new copy (and the view the request path keeps on it) for each one
 * lived long enough to be moved to V8's old generation, only to die there.
 */
export class MemoryObject implements CachedObject {
  readonly key: CacheKey;
  readonly variantKey: string;
  readonly vary: string[];
  readonly status: number;
  readonly headers: StoredHeaders;
  requestTime: number;
  cachedAt: number;
  staleAt: number;
  deleteAt: number;
  readonly size: number;
  invalidated?: number;
  readonly volatile?: boolean;
  readonly tags?: readonly string[];
  readonly body: Buffer;
  /** The request path's view of this copy (stored-view.ts), held here: no table probe per hit. Never read by the store. */
  derived: object | undefined = undefined;
  // The memory store's own bookkeeping (memory-store.ts), on the object rather than on a node of
  // its own, which was a fifth JS object per stored copy. Only the store reads or writes these.
  // Private fields behind accessors: a spread or JSON of a copy ({ ...obj }, as encode.ts and
  // refresh.ts make) takes own fields only, so it neither copies the links (which would keep
  // evicted neighbours, bodies and all, alive) nor meets a cycle.
  #cost = 0;
  #prev: MemoryObject | null = null;
  #next: MemoryObject | null = null;
  #sibling: MemoryObject | null = null;
  #stamp = 0;
  /** What this copy counts against the store's bound (memoryCost), once stored. */
  get cost(): number { return this.#cost; }
  set cost(v: number) { this.#cost = v; }
  /** Neighbours in the store's LRU list (null at its ends and once out of the store). */
  get prev(): MemoryObject | null { return this.#prev; }
  set prev(v: MemoryObject | null) { this.#prev = v; }
  get next(): MemoryObject | null { return this.#next; }
  set next(v: MemoryObject | null) { this.#next = v; }
  /** The next older variant of the same URL (null: none, the usual). */
  get sibling(): MemoryObject | null { return this.#sibling; }
  set sibling(v: MemoryObject | null) { this.#sibling = v; }
  /** The store's promotion count when this copy was last put at the front (-1: no longer held). */
  get stamp(): number { return this.#stamp; }
  set stamp(v: number) { this.#stamp = v; }

  /** `patch`: a 304's fields and times over those of `meta` (a freshened copy of it). */
  constructor(meta: CacheEntryMeta, body: Buffer, patch?: NotModifiedPatch) {
    // A copy of a held object shares its key (never changed); one from elsewhere gets its own.
    this.key = meta instanceof MemoryObject ? meta.key : { vhost: meta.key.vhost, url: meta.key.url };
    this.variantKey = meta.variantKey;
    this.vary = meta.vary.length === 0 ? NO_VARY : meta.vary;
    this.status = meta.status;
    const t = patch ?? meta;
    this.headers = t.headers;
    this.requestTime = t.requestTime;
    this.cachedAt = t.cachedAt;
    this.staleAt = t.staleAt;
    this.deleteAt = t.deleteAt;
    this.size = body.length;
    if (t.invalidated !== undefined) this.invalidated = t.invalidated;
    if (meta.volatile !== undefined) this.volatile = meta.volatile;
    if (meta.tags !== undefined) this.tags = meta.tags;
    this.body = body;
  }

  /** The times of a 304 whose fields are this object's own (MemoryStore.freshen only). */
  renew(patch: NotModifiedPatch): void {
    this.requestTime = patch.requestTime;
    this.cachedAt = patch.cachedAt;
    this.staleAt = patch.staleAt;
    this.deleteAt = patch.deleteAt;
    // Absent and 0 say the same; adding the field would give the object another hidden class.
    if ((this.invalidated ?? 0) !== (patch.invalidated ?? 0)) this.invalidated = patch.invalidated;
  }

  openBody(start?: number, end?: number): Readable {
    return bufferStream(this.body, start, end);
  }
}

/** Fixed cost per entry (object, node, map slots), so many tiny entries still count. */
const ENTRY_OVERHEAD = 256;

/** What a copy counts against a memory store's bound: its body, fields, keys and a fixed overhead. */
export function memoryCost(obj: MemoryObject): number {
  return obj.body.length + estimateHeaderBytes(obj.headers) + obj.key.url.length + obj.variantKey.length + ENTRY_OVERHEAD;
}

function estimateHeaderBytes(headers: StoredHeaders): number {
  let n = 0;
  for (const name in headers) {
    const v = headers[name]!;
    if (typeof v === 'string') n += name.length + v.length + 4;
    else for (const one of v) n += name.length + one.length + 4;
  }
  return n;
}
