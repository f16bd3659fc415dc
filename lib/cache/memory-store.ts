// Per-process memory cache: an LRU bounded in bytes. Hits are the hottest path of the server,
// so a lookup is two Map gets (vhost, then url: no key string is built) plus a scan of the few
// variants of the URL, and the returned object is the stored one (nothing allocated per hit).
import { Readable, Writable } from 'node:stream';
import type { CacheEntryMeta, CacheKey, CacheStore, CachedObject, StoredHeaders } from './store.js';
import { type PrefixMark } from './prefix.js';

export interface MemoryStoreOptions {
  /** Bound of bodies plus estimated header/bookkeeping bytes. */
  maxBytes: number;
  /** Larger objects are not kept (default: an eighth of maxBytes). */
  maxObjectBytes?: number;
}

/** Fixed cost per entry (object, node, map slots), so many tiny entries still count. */
const ENTRY_OVERHEAD = 256;

function estimateHeaderBytes(headers: StoredHeaders): number {
  let n = 0;
  for (const name in headers) {
    const v = headers[name]!;
    if (typeof v === 'string') n += name.length + v.length + 4;
    else for (const one of v) n += name.length + one.length + 4;
  }
  return n;
}

/** A stream of `body[start..end]` (inclusive) as one chunk: the body is already in memory. */
function bufferStream(body: Buffer, start?: number, end?: number): Readable {
  const s = start ?? 0;
  const e = end === undefined ? body.length : Math.min(end + 1, body.length);
  return Readable.from([body.subarray(s, Math.max(s, e))], { objectMode: false });
}

/**
 * A stored entry. Callers get this very object on every hit, so they must treat it as read-only;
 * updateMeta replaces it with a new one rather than mutating it under a reader.
 */
export class MemoryObject implements CachedObject {
  readonly key: CacheKey;
  readonly variantKey: string;
  readonly vary: string[];
  readonly status: number;
  readonly headers: StoredHeaders;
  readonly requestTime: number;
  readonly cachedAt: number;
  readonly staleAt: number;
  readonly deleteAt: number;
  readonly size: number;
  readonly invalidated?: number;
  readonly volatile?: boolean;
  readonly tags?: readonly string[];
  readonly body: Buffer;
  /** The request path's view of this copy (stored-view.ts), held here: no table probe per hit. Never read by the store. */
  derived: object | undefined = undefined;

  constructor(meta: CacheEntryMeta, body: Buffer) {
    this.key = { vhost: meta.key.vhost, url: meta.key.url };
    this.variantKey = meta.variantKey;
    this.vary = meta.vary;
    this.status = meta.status;
    this.headers = meta.headers;
    this.requestTime = meta.requestTime;
    this.cachedAt = meta.cachedAt;
    this.staleAt = meta.staleAt;
    this.deleteAt = meta.deleteAt;
    this.size = body.length;
    if (meta.invalidated !== undefined) this.invalidated = meta.invalidated;
    if (meta.volatile !== undefined) this.volatile = meta.volatile;
    if (meta.tags !== undefined) this.tags = meta.tags;
    this.body = body;
  }

  openBody(start?: number, end?: number): Readable {
    return bufferStream(this.body, start, end);
  }
}

interface Node {
  obj: MemoryObject;
  bytes: number;
  prev: Node | null;
  next: Node | null;
  group: Group;
}

/** The variants of one URL (usually one or two). */
interface Group {
  vhost: string;
  url: string;
  nodes: Node[];
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
  private readonly hosts = new Map<string, Map<string, Group>>();
  /** Kept as entries come and go (inserts and evictions only, never on a hit). */
  private readonly perHost = new Map<string, HostMemory>();
  /** Most recently used end of the LRU list. */
  private head: Node | null = null;
  private tail: Node | null = null;
  private used = 0;
  private count = 0;

  constructor(opts: MemoryStoreOptions) {
    if (!(opts.maxBytes >= 0)) throw new RangeError('maxBytes must be a non-negative number');
    this.maxBytes = opts.maxBytes;
    this.maxObjectBytes = Math.min(opts.maxObjectBytes ?? Math.floor(opts.maxBytes / 8), opts.maxBytes);
  }

  /** Synchronous hit path: the stored object (body in `body`), or undefined. Counts as a use. */
  peek(key: CacheKey, variantKey: string): MemoryObject | undefined {
    const group = this.hosts.get(key.vhost)?.get(key.url);
    if (group === undefined) return undefined;
    const nodes = group.nodes;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (node.obj.variantKey === variantKey) {
        this.touch(node);
        return node.obj;
      }
    }
    return undefined;
  }

  /**
   * The hit path: the newest variant of the URL that `accepts(variant, arg)` takes, counted as a
   * use. A matcher plus its argument rather than a closure, so a lookup allocates nothing.
   */
  find<A>(vhost: string, url: string, accepts: (obj: MemoryObject, arg: A) => boolean, arg: A): MemoryObject | undefined {
    const group = this.hosts.get(vhost)?.get(url);
    if (group === undefined) return undefined;
    const nodes = group.nodes;
    let best: Node | undefined;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if ((best === undefined || node.obj.cachedAt > best.obj.cachedAt) && accepts(node.obj, arg)) best = node;
    }
    if (best === undefined) return undefined;
    this.touch(best);
    return best.obj;
  }

  /** Synchronous variants listing, newest first (objects carry their bodies). */
  variantsSync(key: CacheKey): MemoryObject[] {
    const group = this.hosts.get(key.vhost)?.get(key.url);
    if (group === undefined) return [];
    const list = group.nodes.map((n) => n.obj);
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
    const bytes = this.costOf(obj);
    if (body.length > this.maxObjectBytes || bytes > this.maxBytes) {
      // The old variant would now be an outdated answer for this key: drop it too.
      this.deleteSync(meta.key, meta.variantKey);
      return undefined;
    }
    // One lookup of the URL in the (large) map: every miss of the server comes through here.
    let urls = this.hosts.get(meta.key.vhost);
    if (urls === undefined) this.hosts.set(meta.key.vhost, (urls = new Map()));
    let group = urls.get(meta.key.url);
    if (group === undefined) {
      group = { vhost: meta.key.vhost, url: meta.key.url, nodes: [] };
      urls.set(group.url, group);
    } else {
      // The variant it replaces goes; the group stays (the new node joins it below).
      const nodes = group.nodes;
      for (let i = nodes.length - 1; i >= 0; i--) if (nodes[i]!.obj.variantKey === meta.variantKey) this.unlinkNode(nodes[i]!, i, true);
    }
    const node: Node = { obj, bytes, prev: null, next: null, group };
    // A URL's first variant: a one-element list (unshift on an empty array reserves room for 16).
    if (group.nodes.length === 0) group.nodes = [node];
    else group.nodes.unshift(node);
    this.pushFront(node);
    this.used += bytes;
    this.count++;
    const h = this.usageOf(group.vhost);
    h.bytes += bytes;
    h.objects++;
    this.evict(node);
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
    const group = this.hosts.get(key.vhost)?.get(key.url);
    const node = group?.nodes.find((n) => n.obj.variantKey === variantKey);
    if (node === undefined) return false;
    this.replaceObj(node, new MemoryObject({ ...node.obj, ...patch }, node.obj.body));
    return true;
  }

  async delete(key: CacheKey, variantKey?: string): Promise<number> {
    return this.deleteSync(key, variantKey).length;
  }

  /** Deletes and returns the variant keys that were removed. */
  deleteSync(key: CacheKey, variantKey?: string): string[] {
    const group = this.hosts.get(key.vhost)?.get(key.url);
    if (group === undefined) return [];
    const removed: string[] = [];
    for (let i = group.nodes.length - 1; i >= 0; i--) {
      const node = group.nodes[i]!;
      if (variantKey !== undefined && node.obj.variantKey !== variantKey) continue;
      removed.push(node.obj.variantKey);
      this.unlinkNode(node, i);
    }
    return removed;
  }

  /** Entries of a vhost whose URL starts with prefix (a walk over the vhost: admin path only). */
  listByPrefix(vhost: string, prefix: string, limit = Infinity): MemoryObject[] {
    const out: MemoryObject[] = [];
    const urls = this.hosts.get(vhost);
    if (urls === undefined) return out;
    for (const [url, group] of urls) {
      if (!url.startsWith(prefix)) continue;
      for (const n of group.nodes) {
        if (out.length >= limit) return out;
        out.push(n.obj);
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

  private costOf(obj: MemoryObject): number {
    return obj.body.length + estimateHeaderBytes(obj.headers) + obj.key.url.length + obj.variantKey.length + ENTRY_OVERHEAD;
  }

  private replaceObj(node: Node, obj: MemoryObject): void {
    const bytes = this.costOf(obj);
    this.used += bytes - node.bytes;
    this.usageOf(node.group.vhost).bytes += bytes - node.bytes;
    node.obj = obj;
    node.bytes = bytes;
    this.evict(node);
  }

  /** Drops least recently used entries until within bounds, never the one just stored. */
  private evict(keep: Node): void {
    let guard = this.count;
    while (this.used > this.maxBytes && guard-- > 0) {
      const victim = this.tail;
      if (victim === null || victim === keep) break;
      const h = this.usageOf(victim.group.vhost);
      h.evictedBytes += victim.bytes;
      h.evictedObjects++;
      this.unlinkNode(victim, victim.group.nodes.indexOf(victim));
    }
  }

  private touch(node: Node): void {
    if (this.head === node) return;
    this.detach(node);
    this.pushFront(node);
  }

  private pushFront(node: Node): void {
    node.prev = null;
    node.next = this.head;
    if (this.head !== null) this.head.prev = node;
    this.head = node;
    if (this.tail === null) this.tail = node;
  }

  private detach(node: Node): void {
    if (node.prev !== null) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next !== null) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = null;
  }

  private unlinkNode(node: Node, indexInGroup: number, keepGroup = false): void {
    this.detach(node);
    const group = node.group;
    if (indexInGroup >= 0) group.nodes.splice(indexInGroup, 1);
    if (group.nodes.length === 0 && !keepGroup) {
      const urls = this.hosts.get(group.vhost);
      urls?.delete(group.url);
      if (urls !== undefined && urls.size === 0) this.hosts.delete(group.vhost);
    }
    this.used -= node.bytes;
    this.count--;
    const h = this.usageOf(group.vhost);
    h.bytes -= node.bytes;
    h.objects--;
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
