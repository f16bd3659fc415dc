// The object a memory store holds (memory-store.ts): the meta and the whole body in one Buffer,
// handed to every hit as it is, so a hit allocates nothing. A file of its own so that the store's
// LRU and the object's shape are read apart.
import { Readable } from 'node:stream';
import type { CacheEntryMeta, CacheKey, CachedObject, StoredHeaders } from './store.js';

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
