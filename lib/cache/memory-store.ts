// Per-process memory cache: an LRU bounded in bytes. Hits are the hottest path of the server,
// and with many objects (hit-mix: 10,000) what a hit costs is mostly the cache lines it reads
// cold, so a hit touches few objects: two Map gets (vhost, then url: no key string is built)
// give the URL's newest variant at once (the other variants, usually none, hang off it), and the
// stored object is returned as it is (nothing allocated per hit). The LRU links live on the
// stored object itself (MemoryObject's prev/next/sibling), not on a node object of their own: one
// JS object less per stored object for every mark-compact to mark.
//
// The LRU order is by last promotion, not by last use: a hit moves its entry to the front only
// when it has left the front half of the list (more entries were put at the front since it was
// than half the entries held), like Varnish's lru_interval but counted in promotions, not time.
// With many objects hit at random, a relink (a write to two other random entries) is saved on
// about every other hit, and an object hit over and over is never relinked. What is given up:
// an entry hit while in the front half may be evicted before entries used less recently than
// that hit, but only after at least half the entries held then were stored or promoted after
// it (everything behind it goes first). The byte bound stays exact: eviction still takes the
// tail until the store is within maxBytes.
import { Writable } from 'node:stream';
import type { CacheEntryMeta, CacheKey, CacheStore, CachedObject, NotModified, NotModifiedPatch } from './store.js';
import { MemoryObject, memoryCost } from './memory-object.js';
import { freshenedBy304, notModifiedPatch } from './policy/not-modified.js';
import { type PrefixMark } from './prefix.js';

export interface MemoryStoreOptions {
  /** Bound of bodies plus estimated header/bookkeeping bytes. */
  maxBytes: number;
  /** Larger objects are not kept (default: an eighth of maxBytes). */
  maxObjectBytes?: number;
}

/** What one host holds in a memory store (VirtualHost Memory, FileInstance, SecuredMemory). */
export interface HostMemory {
  bytes: number;
  objects: number;
  /** Bytes the LRU evicted to make room, since the store opened. */
  evictedBytes: number;
  evictedObjects: number;
}

export class MemoryStore implements CacheStore {
  readonly maxBytes: number;
  readonly maxObjectBytes: number;
  /** vhost -> url -> the URL's newest variant (the older ones follow it by `sibling`). */
  private readonly hosts = new Map<string, Map<string, MemoryObject>>();
  /** Kept as entries come and go (inserts and evictions only, never on a hit). */
  private readonly perHost = new Map<string, HostMemory>();
  /** Most recently used end of the LRU list. */
  private head: MemoryObject | null = null;
  private tail: MemoryObject | null = null;
  private used = 0;
  private count = 0;
  /** Entries put at the front so far (stores and promotions): a node's distance from it, at most. */
  private pushes = 0;

  constructor(opts: MemoryStoreOptions) {
    if (!(opts.maxBytes >= 0)) throw new RangeError('maxBytes must be a non-negative number');
    this.maxBytes = opts.maxBytes;
    this.maxObjectBytes = Math.min(opts.maxObjectBytes ?? Math.floor(opts.maxBytes / 8), opts.maxBytes);
  }

  /** Synchronous hit path: the stored object (body in `body`), or undefined. Counts as a use. */
  peek(key: CacheKey, variantKey: string): MemoryObject | undefined {
    for (let node: MemoryObject | null | undefined = this.hosts.get(key.vhost)?.get(key.url); node !== undefined && node !== null; node = node.sibling) {
      if (node.variantKey === variantKey) {
        this.touch(node);
        return node;
      }
    }
    return undefined;
  }

  /**
   * The hit path: the newest variant of the URL that `accepts(variant, arg)` takes, counted as a
   * use. A matcher plus its argument rather than a closure, so a lookup allocates nothing.
   */
  find<A>(vhost: string, url: string, accepts: (obj: MemoryObject, arg: A) => boolean, arg: A): MemoryObject | undefined {
    const first = this.hosts.get(vhost)?.get(url);
    if (first === undefined) return undefined;
    let best: MemoryObject | undefined;
    if (first.sibling === null) {
      // The usual URL: one variant, nothing to compare.
      if (accepts(first, arg)) best = first;
    } else {
      for (let node: MemoryObject | null = first; node !== null; node = node.sibling) {
        if ((best === undefined || node.cachedAt > best.cachedAt) && accepts(node, arg)) best = node;
      }
    }
    if (best === undefined) return undefined;
    this.touch(best);
    return best;
  }

  /** Synchronous variants listing, newest first (objects carry their bodies). */
  variantsSync(key: CacheKey): MemoryObject[] {
    const list: MemoryObject[] = [];
    for (let node: MemoryObject | null | undefined = this.hosts.get(key.vhost)?.get(key.url); node !== undefined && node !== null; node = node.sibling) list.push(node);
    return list.length > 1 ? list.sort((a, b) => b.cachedAt - a.cachedAt) : list;
  }

  async variants(key: CacheKey): Promise<CacheEntryMeta[]> {
    return this.variantsSync(key);
  }

  /** All in this process: the same as variants, synchronously. */
  candidates(key: CacheKey): CacheEntryMeta[] {
    return this.variantsSync(key);
  }

  async get(key: CacheKey, variantKey: string): Promise<CachedObject | undefined> {
    return this.peek(key, variantKey);
  }

  /** Stores a complete body at once (also used by the tiered store to promote disk hits). */
  put(meta: CacheEntryMeta, body: Buffer): MemoryObject | undefined {
    const obj = new MemoryObject(meta, body);
    const bytes = memoryCost(obj);
    if (body.length > this.maxObjectBytes || bytes > this.maxBytes) {
      // The old variant would now be an outdated answer for this key: drop it too.
      this.deleteSync(meta.key, meta.variantKey);
      return undefined;
    }
    // One lookup of the URL in the (large) map: every miss of the server comes through here.
    let urls = this.hosts.get(meta.key.vhost);
    if (urls === undefined) this.hosts.set(meta.key.vhost, (urls = new Map()));
    let first = urls.get(meta.key.url);
    // The variant it replaces goes (the URL's entry stays: the new object takes it below).
    for (let n: MemoryObject | null | undefined = first; n !== undefined && n !== null; n = n.sibling) {
      if (n.variantKey === meta.variantKey) { first = this.unlink(n, urls); break; }
    }
    obj.cost = bytes;
    obj.sibling = first ?? null;
    urls.set(obj.key.url, obj);
    this.pushFront(obj);
    this.used += bytes;
    this.count++;
    const h = this.usageOf(obj.key.vhost);
    h.bytes += bytes;
    h.objects++;
    this.evict(obj);
    return obj;
  }

  createWriteStream(meta: CacheEntryMeta): Writable {
    let chunks: Buffer[] | null = [];
    let bytes = 0;
    return new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        bytes += chunk.length;
        if (chunks !== null) {
          // Past the object limit nothing will be kept: stop holding the bytes.
          if (bytes > this.maxObjectBytes) chunks = null;
          else chunks.push(chunk);
        }
        cb();
      },
      final: (cb) => {
        if (chunks === null) this.deleteSync(meta.key, meta.variantKey);
        else this.put(meta, joinChunks(chunks, bytes));
        chunks = null;
        cb();
      },
      destroy: (err, cb) => {
        chunks = null;
        cb(err);
      },
    });
  }

  async updateMeta(key: CacheKey, variantKey: string, patch: Parameters<CacheStore['updateMeta']>[2]): Promise<boolean> {
    return this.updateMetaSync(key, variantKey, patch);
  }

  updateMetaSync(key: CacheKey, variantKey: string, patch: Parameters<CacheStore['updateMeta']>[2]): boolean {
    const node = this.nodeOf(key, variantKey);
    if (node === undefined) return false;
    this.replaceObj(node, new MemoryObject({ ...node, ...patch }, node.body));
    return true;
  }

  /** CacheStore.freshen for the variants held here, at once; returns the answered one as freshened. */
  freshen(key: CacheKey, variantKey: string, patch: NotModifiedPatch | undefined, nm: NotModified): MemoryObject | undefined {
    const first = this.hosts.get(key.vhost)?.get(key.url);
    if (first === undefined) return undefined;
    // The usual URL has one variant: no list to take.
    if (first.sibling === null) return this.freshenNode(first, variantKey, patch, nm);
    let answered: MemoryObject | undefined;
    // A list taken first: replacing one object may evict others of the URL.
    const nodes: MemoryObject[] = [];
    for (let n: MemoryObject | null = first; n !== null; n = n.sibling) nodes.push(n);
    for (const node of nodes) answered = this.freshenNode(node, variantKey, patch, nm) ?? answered;
    return answered;
  }

  /** One variant's part of freshen: the answered one (returned) or another the 304 selects. */
  private freshenNode(obj: MemoryObject, variantKey: string, patch: NotModifiedPatch | undefined, nm: NotModified): MemoryObject | undefined {
    if (obj.stamp < 0 || !freshenedBy304(obj, variantKey, nm.headers)) return undefined;
    if (obj.variantKey === variantKey) return patch === undefined ? undefined : this.freshenedCopy(obj, patch);
    this.replaceObj(obj, new MemoryObject(obj, obj.body, notModifiedPatch(obj, nm.headers, nm.requestTime, nm.receivedAt, nm.policy)));
    return undefined;
  }

  freshened(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * The answered copy after its 304: the same object with new times when the 304 changed none of
   * its fields (MemoryObject.renew; its size and cost stay), else a new copy in its place.
   */
  private freshenedCopy(obj: MemoryObject, patch: NotModifiedPatch): MemoryObject {
    if (patch.headers === obj.headers) { obj.renew(patch); return obj; }
    const copy = new MemoryObject(obj, obj.body, patch);
    this.replaceObj(obj, copy);
    return copy;
  }

  async delete(key: CacheKey, variantKey?: string): Promise<number> {
    return this.deleteSync(key, variantKey).length;
  }

  /** Deletes and returns the variant keys that were removed. */
  deleteSync(key: CacheKey, variantKey?: string): string[] {
    const urls = this.hosts.get(key.vhost);
    const removed: string[] = [];
    for (let node: MemoryObject | null | undefined = urls?.get(key.url), next; node !== undefined && node !== null; node = next) {
      next = node.sibling; // unlink clears it
      if (variantKey !== undefined && node.variantKey !== variantKey) continue;
      removed.push(node.variantKey);
      this.dropEmpty(urls!, this.unlink(node, urls!), key);
    }
    return removed;
  }

  /** Entries of a vhost whose URL starts with prefix (a walk over the vhost: admin path only). */
  listByPrefix(vhost: string, prefix: string, limit = Infinity): MemoryObject[] {
    const out: MemoryObject[] = [];
    const urls = this.hosts.get(vhost);
    if (urls === undefined) return out;
    for (const [url, first] of urls) {
      if (!url.startsWith(prefix)) continue;
      for (let n: MemoryObject | null = first; n !== null; n = n.sibling) {
        if (out.length >= limit) return out;
        out.push(n);
      }
    }
    return out;
  }

  /** Entries of a vhost the origin tagged `tag` (a walk over the vhost: admin path only). */
  listTagged(vhost: string, tag: string): MemoryObject[] {
    return this.listByPrefix(vhost, '').filter((o) => o.tags?.includes(tag) === true);
  }

  deleteByPrefix(vhost: string, prefix: string): number {
    let n = 0;
    for (const obj of this.listByPrefix(vhost, prefix)) n += this.deleteSync(obj.key, obj.variantKey).length;
    return n;
  }

  markByPrefix(vhost: string, prefix: string, mark: PrefixMark): number {
    let n = 0;
    for (const obj of this.listByPrefix(vhost, prefix)) {
      if (this.updateMetaSync(obj.key, obj.variantKey, mark)) n++;
    }
    return n;
  }

  stats(): { entries: number; bytes: number; maxBytes: number } {
    return { entries: this.count, bytes: this.used, maxBytes: this.maxBytes };
  }

  async close(): Promise<void> {
    this.hosts.clear();
    this.perHost.clear();
    this.head = this.tail = null;
    this.used = this.count = 0;
  }

  /** `obj` takes the place of `old` (a held copy of the same key and variant) in the LRU and its URL's variants. */
  private replaceObj(old: MemoryObject, obj: MemoryObject): void {
    const bytes = memoryCost(obj);
    this.used += bytes - old.cost;
    this.usageOf(obj.key.vhost).bytes += bytes - old.cost;
    obj.cost = bytes; obj.stamp = old.stamp;
    obj.prev = old.prev; obj.next = old.next; obj.sibling = old.sibling;
    if (old.prev !== null) old.prev.next = obj; else this.head = obj;
    if (old.next !== null) old.next.prev = obj; else this.tail = obj;
    const urls = this.hosts.get(obj.key.vhost)!;
    let n = urls.get(obj.key.url)!;
    if (n === old) urls.set(obj.key.url, obj);
    else {
      while (n.sibling !== old && n.sibling !== null) n = n.sibling;
      n.sibling = obj;
    }
    old.prev = old.next = old.sibling = null;
    old.stamp = -1;
    this.evict(obj);
  }

  /** Drops least recently used entries until within bounds, never the one just stored. */
  private evict(keep: MemoryObject): void {
    let guard = this.count;
    while (this.used > this.maxBytes && guard-- > 0) {
      const victim = this.tail;
      if (victim === null || victim === keep) break;
      const key = victim.key;
      const h = this.usageOf(key.vhost);
      h.evictedBytes += victim.cost;
      h.evictedObjects++;
      const urls = this.hosts.get(key.vhost)!;
      this.dropEmpty(urls, this.unlink(victim, urls), key);
    }
  }

  /**
   * A hit: the entry goes to the front unless it is in the front half already (see the head of
   * this file: the order is by last promotion). At most count/2 entries were put at the front
   * since its stamp, so at least half the list is behind it.
   */
  private touch(node: MemoryObject): void {
    if (this.pushes - node.stamp < this.count >>> 1 || this.head === node) return;
    this.detach(node);
    this.pushFront(node);
  }

  private pushFront(node: MemoryObject): void {
    node.prev = null;
    node.next = this.head;
    node.stamp = ++this.pushes;
    if (this.head !== null) this.head.prev = node;
    this.head = node;
    if (this.tail === null) this.tail = node;
  }

  private detach(node: MemoryObject): void {
    if (node.prev !== null) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next !== null) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = null;
  }

  private nodeOf(key: CacheKey, variantKey: string): MemoryObject | undefined {
    for (let n: MemoryObject | null | undefined = this.hosts.get(key.vhost)?.get(key.url); n !== undefined && n !== null; n = n.sibling) if (n.variantKey === variantKey) return n;
    return undefined;
  }

  /**
   * Takes a node out of the LRU list, its URL's variants and the counts; returns the URL's first
   * node now (undefined: none left, and the caller decides whether the URL's entry goes).
   */
  private unlink(node: MemoryObject, urls: Map<string, MemoryObject>): MemoryObject | undefined {
    this.detach(node);
    const url = node.key.url;
    const first = urls.get(url)!;
    let now: MemoryObject | undefined = first;
    if (first === node) {
      now = node.sibling ?? undefined;
      if (now !== undefined) urls.set(url, now);
    } else {
      let n = first;
      while (n.sibling !== node && n.sibling !== null) n = n.sibling;
      if (n.sibling === node) n.sibling = node.sibling;
    }
    // A copy still held (an answer in flight) must not keep its URL's other variants alive.
    node.sibling = null;
    node.stamp = -1;
    this.used -= node.cost;
    this.count--;
    const h = this.usageOf(node.key.vhost);
    h.bytes -= node.cost;
    h.objects--;
    return now;
  }

  /** A URL whose last variant went leaves the map (and a host with no URL left, the host map). */
  private dropEmpty(urls: Map<string, MemoryObject>, first: MemoryObject | undefined, key: CacheKey): void {
    if (first !== undefined) return;
    urls.delete(key.url);
    if (urls.size === 0) this.hosts.delete(key.vhost);
  }

  private usageOf(vhost: string): HostMemory {
    let h = this.perHost.get(vhost);
    if (h === undefined) this.perHost.set(vhost, (h = { bytes: 0, objects: 0, evictedBytes: 0, evictedObjects: 0 }));
    return h;
  }

  /** A copy of one host's share of the store now (zeros for a host it never held). */
  hostUsage(vhost: string): HostMemory {
    const h = this.perHost.get(vhost);
    return h === undefined ? { bytes: 0, objects: 0, evictedBytes: 0, evictedObjects: 0 } : { ...h };
  }
}

/** Bytes a kept chunk may pin beyond itself (the rest of its buffer): see joinChunks. */
const PIN_SLACK = 1024;

/**
 * One Buffer for the body. A lone chunk is kept as is when its buffer is not much larger: an
 * origin body that arrived in one read is a view of that read's buffer, which holds the
 * response head too (a few hundred bytes), and copying it would cost an allocation and a copy
 * per cached object. A chunk of a larger (pooled) buffer is copied so it does not pin it.
 */
export function joinChunks(chunks: Buffer[], bytes: number): Buffer {
  if (chunks.length === 1) {
    const c = chunks[0]!;
    if (c.buffer.byteLength - c.length <= Math.min(PIN_SLACK, c.length >>> 3)) return c;
  }
  return Buffer.concat(chunks, bytes);
}
