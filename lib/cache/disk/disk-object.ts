// A disk hit as the store contract sees it: the index row's metadata, the body read from its
// file on demand. The row conversions are shared with the store's listings (fileinfo).
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { IndexRow } from '../index-db.js';
import type { CacheEntryMeta, CacheKey, CachedObject } from '../store.js';

/** What a body read tells its store: opened files count per host; a vanished file drops its row. */
export interface BodyReads {
  readOpened(vhost: string, stream: Readable): void;
  forgetMissing(row: IndexRow): void;
}

/** A full index row in contract shape plus the fields of the cache file record (fileinfo). */
export interface DiskRecord extends CacheEntryMeta {
  id: number;
  disk: number;
  fid: string;
  path: string;
  hashKey: string;
  lastAccess: number;
  createdAt: number;
  updatedAt: number;
  flags: number;
}

export function rowToMeta(r: IndexRow): CacheEntryMeta {
  return {
    key: { vhost: r.vhost, url: r.url },
    variantKey: r.variant,
    vary: JSON.parse(r.vary) as string[],
    status: r.status,
    headers: JSON.parse(r.headers) as CacheEntryMeta['headers'],
    requestTime: r.request_time,
    cachedAt: r.cached_at,
    staleAt: r.stale_at,
    deleteAt: r.delete_at,
    size: r.size,
    invalidated: r.invalidated,
    ...(r.tags === '' || r.tags === undefined ? {} : { tags: r.tags.split(' ') }),
  };
}

export function rowToRecord(r: IndexRow): DiskRecord {
  return {
    ...rowToMeta(r), id: r.id, disk: r.disk, fid: r.fid, path: r.path, hashKey: r.hash_key,
    lastAccess: r.last_access, createdAt: r.created_at, updatedAt: r.updated_at, flags: r.flags,
  };
}

/** A disk hit: metadata from the index, body read from its file on demand. */
export class DiskObject implements CachedObject {
  readonly key: CacheKey; readonly variantKey: string; readonly vary: string[];
  readonly status: number; readonly headers: CacheEntryMeta['headers'];
  readonly requestTime: number; readonly cachedAt: number; readonly staleAt: number;
  readonly deleteAt: number; readonly size: number; readonly invalidated: number;
  readonly tags?: readonly string[];
  readonly body = undefined;
  constructor(private readonly row: IndexRow, private readonly store: BodyReads) {
    const m = rowToMeta(row);
    this.key = m.key; this.variantKey = m.variantKey; this.vary = m.vary; this.status = m.status;
    this.headers = m.headers; this.requestTime = m.requestTime; this.cachedAt = m.cachedAt;
    this.staleAt = m.staleAt; this.deleteAt = m.deleteAt; this.size = m.size; this.invalidated = row.invalidated;
    if (m.tags !== undefined) this.tags = m.tags;
  }
  get path(): string { return this.row.path; }
  openBody(start?: number, end?: number): Readable {
    const s = createReadStream(this.row.path, { start: start ?? 0, ...(end === undefined ? {} : { end }) });
    this.store.readOpened(this.key.vhost, s);
    // The body vanished (removed by another worker after a replacement, or by hand): drop the
    // row so the next lookup is a clean miss instead of another failed read.
    s.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') this.store.forgetMissing(this.row);
    });
    return s;
  }
}
