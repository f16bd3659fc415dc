// Memory in front of disk, one per worker process. Memory answers hot objects from one Buffer;
// disk (shared by all workers) answers the rest and survives restarts. Volatile objects
// (mode.volatile below mode.nonVolatileSize) never reach the disk.
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { DiskStore } from './disk-store.js';
import { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
import type { MemoryObject } from './memory-object.js';
import type { CacheEntryMeta, CacheKey, CacheStore, CachedObject, NotModified, NotModifiedPatch } from './store.js';
import { TieredSink, type StoreSink } from './tiered-sink.js';

export type { StoreSink } from './tiered-sink.js';

export interface TieredStoreOptions {
  memory: MemoryStore | MemoryStoreOptions;
  disk: DiskStore;
  /** Objects up to this size are kept in (and promoted into) memory; default memory.maxObjectBytes. */
  memoryObjectMax?: number;
}

type Patch = Parameters<CacheStore['updateMeta']>[2];

export class TieredStore implements CacheStore {
  readonly memory: MemoryStore;
  readonly disk: DiskStore;
  readonly memoryObjectMax: number;

  constructor(opts: TieredStoreOptions) {
    this.memory = opts.memory instanceof MemoryStore ? opts.memory : new MemoryStore(opts.memory);
    this.disk = opts.disk;
    this.memoryObjectMax = Math.min(opts.memoryObjectMax ?? this.memory.maxObjectBytes, this.memory.maxObjectBytes);
  }

  variantsSync(key: CacheKey): MemoryObject[] {
    return this.memory.variantsSync(key);
  }

  /** Synchronous memory hit (no Promise, no SQLite); undefined means "ask get()". */
  peek(key: CacheKey, variantKey: string): MemoryObject | undefined {
    return this.memory.peek(key, variantKey);
  }

  /** Not an async function: a lookup that misses memory runs once per miss of the server. */
  variants(key: CacheKey): Promise<CacheEntryMeta[]> {
    try {
      return Promise.resolve(this.everyVariant(key));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** What the request path looks up: memory, and the disk rows the directory says may exist. */
  candidates(key: CacheKey): CacheEntryMeta[] {
    return this.everyVariant(key, true);
  }

  private everyVariant(key: CacheKey, forRequest = false): CacheEntryMeta[] {
    const mem = this.memory.variantsSync(key);
    const disk = forRequest ? this.disk.candidatesSync(key) : this.disk.variantsSync(key);
    if (mem.length === 0) return disk;
    const seen = new Set(disk.map((m) => m.variantKey));
    const all: CacheEntryMeta[] = [...disk, ...mem.filter((m) => !seen.has(m.variantKey))];
    return all.sort((a, b) => b.cachedAt - a.cachedAt);
  }

  async get(key: CacheKey, variantKey: string): Promise<CachedObject | undefined> {
    const hit = this.memory.peek(key, variantKey);
    if (hit !== undefined) return hit;
    const obj = this.disk.getSync(key, variantKey);
    if (obj === undefined || obj.size > this.memoryObjectMax) return obj;
    // Small object: read it whole and keep it in memory, so the next hit is a Buffer.
    let body: Buffer;
    try {
      body = await readFile(obj.path);
    } catch {
      obj.openBody().on('error', () => undefined).destroy(); // lets the disk store drop a vanished body's row
      return undefined;
    }
    if (body.length !== obj.size) return obj;
    return this.memory.put(obj, body) ?? obj;
  }

  /** The write path of one new object without stream machinery (the miss path). */
  openSink(meta: CacheEntryMeta): StoreSink {
    return new TieredSink(this.memory, this.disk, this.memoryObjectMax, meta);
  }

  createWriteStream(meta: CacheEntryMeta): Writable {
    const sink = this.openSink(meta);
    return new Writable({
      highWaterMark: 64 * 1024,
      write(chunk: Buffer, _enc, cb) {
        if (sink.write(chunk)) cb();
        else sink.onDrain(() => cb());
      },
      // 'finish' of this stream means "visible in the store" (both copies).
      final(cb) { sink.end(() => cb()); },
      destroy(err, cb) {
        sink.abort();
        cb(err);
      },
    });
  }

  async updateMeta(key: CacheKey, variantKey: string, patch: Patch): Promise<boolean> {
    const inMemory = this.memory.updateMetaSync(key, variantKey, patch);
    const onDisk = await this.disk.updateMeta(key, variantKey, patch);
    return inMemory || onDisk;
  }

  /**
   * CacheStore.freshen: the memory copies at once, the index about a second later (a volatile
   * object has no row), or at the end of this turn when the freshened copy is not in memory (the
   * next request reads the index). Returns the answered variant's memory copy as freshened.
   */
  freshen(key: CacheKey, variantKey: string, patch: NotModifiedPatch | undefined, nm: NotModified): MemoryObject | undefined {
    const answered = this.memory.freshen(key, variantKey, patch, nm);
    if (answered?.volatile !== true) this.disk.freshen(key, variantKey, patch, nm, answered === undefined && patch !== undefined);
    return answered;
  }

  freshened(): Promise<void> {
    return this.disk.freshened();
  }

  async delete(key: CacheKey, variantKey?: string): Promise<number> {
    const fromMemory = this.memory.deleteSync(key, variantKey);
    const onDisk = await this.disk.variants(key);
    const fromDisk = variantKey === undefined ? onDisk.map((m) => m.variantKey) : onDisk.some((m) => m.variantKey === variantKey) ? [variantKey] : [];
    await this.disk.delete(key, variantKey);
    return new Set([...fromMemory, ...fromDisk]).size;
  }

  /**
   * Memory is per process, so every worker must run a prefix delete (over IPC); `diskToo: false`
   * lets all but one worker skip the shared index.
   */
  async deleteByPrefix(vhost: string, prefix: string, opts: { diskToo?: boolean } = {}): Promise<number> {
    const m = this.memory.deleteByPrefix(vhost, prefix);
    const d = opts.diskToo === false ? 0 : await this.disk.deleteByPrefix(vhost, prefix);
    return Math.max(m, d);
  }

  async close(): Promise<void> {
    await this.memory.close();
    await this.disk.close();
  }
}
