// The one contract every cache store implements (memory, disk + SQLite index). The request
// pipeline and the management API talk only to this, and one contract test suite
// (test/cache/store-contract.ts) runs against every implementation.
import type { Readable, Writable } from 'node:stream';
import type { CachePolicyOptions } from './policy/options.js';

/** Response header fields as stored: lower-case names, repeated fields as arrays. */
export type StoredHeaders = Record<string, string | string[]>;

/** Identifies one cached URL of one virtual host (all its variants share it). */
export interface CacheKey {
  /** Virtual host name that owns the object (purges and removed hosts work per vhost). */
  vhost: string;
  /** Request target as the cache keys it: path plus query, e.g. `/a/b?x=1`. */
  url: string;
}

/** Everything about a stored response except its body. Times are absolute epoch milliseconds. */
export interface CacheEntryMeta {
  key: CacheKey;
  /** Normalised values of the request headers named by Vary; '' when the response has no Vary. */
  variantKey: string;
  /** Lower-case header names of the response's Vary, empty when none. */
  vary: string[];
  status: number;
  headers: StoredHeaders;
  /** When the request that produced this response was sent (RFC 9111 request_time). */
  requestTime: number;
  /** When the response was received and stored (RFC 9111 response_time). */
  cachedAt: number;
  /** Freshness ends here; later the entry is stale. */
  staleAt: number;
  /** The store may drop the entry after this (stale-while-revalidate / stale-if-error / keep window). */
  deleteAt: number;
  /** Body length in bytes. */
  size: number;
  /** Operator invalidation state: 0 none, 1 purged (restorable), 2 expired by command. */
  invalidated?: number;
  /** Memory-only object (mode.volatile below mode.nonVolatileSize). */
  volatile?: boolean;
  /** The origin's cache tags of the response (lib/cache/tags.ts); a tag purge finds it by them. */
  tags?: readonly string[];
  /**
   * A volatile object of unknown length: once its body reaches this many bytes it is stored on
   * disk after all (mode.nonVolatileSize).
   */
  volatileUpTo?: number;
}

/** A stored entry as returned by `get`: metadata plus a way to read the body. */
export interface CachedObject extends CacheEntryMeta {
  /** Body in one buffer when the store holds it in memory (the fast path), else undefined. */
  body?: Buffer;
  /** Opens a stream of the body bytes `[start, end]` inclusive (whole body without arguments). */
  openBody(start?: number, end?: number): Readable;
}

/** The fields and times a stored entry takes from a 304 (RFC 9111 4.3.4; policy/not-modified.ts). */
export type NotModifiedPatch = Pick<CacheEntryMeta, 'headers' | 'requestTime' | 'cachedAt' | 'staleAt' | 'deleteAt' | 'invalidated'>;

/** A 304 the origin gave to a conditional request for a stored variant (CacheStore.freshen). */
export interface NotModified {
  /** The 304's fields. */
  headers: StoredHeaders;
  /** When the conditional request was sent, and when the 304 arrived. */
  requestTime: number;
  receivedAt: number;
  /** The host's rules for the new freshness times (notModifiedPatch). */
  policy: CachePolicyOptions;
}

export interface CacheStore {
  /** All stored variants of a URL, newest first; empty when none. Never throws for a miss. */
  variants(key: CacheKey): Promise<CacheEntryMeta[]>;
  /**
   * The variants a request may be answered from, synchronously (a miss costs no Promise). The
   * same as `variants` for everything this process stored; an entry another process committed
   * within the last moments may be missing (the request misses, and its answer replaces that
   * entry: never a wrong answer). Invalidation and deletes use `variants`.
   */
  candidates(key: CacheKey): CacheEntryMeta[];
  /** One variant with its body, or undefined. */
  get(key: CacheKey, variantKey: string): Promise<CachedObject | undefined>;
  /**
   * Stores a new response. Bytes written become visible only when the stream finishes; a
   * destroyed or failed stream leaves no entry (and no partial body) behind. An entry with the
   * same key and variantKey is replaced atomically on finish.
   */
  createWriteStream(meta: CacheEntryMeta): Writable;
  /** Replaces headers and times of a stored variant (after a 304); false when it is gone. */
  updateMeta(key: CacheKey, variantKey: string, patch: Partial<Pick<CacheEntryMeta,
    'headers' | 'cachedAt' | 'requestTime' | 'staleAt' | 'deleteAt' | 'invalidated' | 'status'>>): Promise<boolean>;
  /**
   * A 304 answered the revalidation of the stored variant `variantKey` (RFC 9111 4.3.4): that
   * variant takes `patch` (undefined when the 304 is about another representation), and every
   * other stored variant of the URL it selects (freshenedBy304) is freshened by it too
   * (notModifiedPatch). Synchronous: a copy in memory is fresh for the next request. What is on
   * disk may be written later and coalesced (`freshened`), but never fresher than the origin
   * said, and never over an invalidation or a new body that came after the request was sent.
   */
  freshen(key: CacheKey, variantKey: string, patch: NotModifiedPatch | undefined, notModified: NotModified): void;
  /** Resolves once every freshen made before the call is visible to every reader of the store. */
  freshened(): Promise<void>;
  /** Deletes every variant of the URL (or one variant); resolves to the number deleted. */
  delete(key: CacheKey, variantKey?: string): Promise<number>;
  /** Frees resources (file handles, database). */
  close(): Promise<void>;
}
