// Memory in front of disk, one per worker process. Memory answers hot objects from one Buffer;
// disk (shared by all workers) answers the rest and survives restarts. Volatile objects
// (mode.volatile below mode.nonVolatileSize) never reach the disk.
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { DiskStore, type DiskRecord } from './disk-store.js';
import { MemoryStore, type MemoryObject, type MemoryStoreOptions } from './memory-store.js';
import type { PrefixMark } from './prefix.js';
import type { CacheEntryMeta, CacheKey, CacheStore, CachedObject } from './store.js';

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

  /** Synchronous memory hit (no Promise, no SQLite); undefined means "ask get()". */
  peek(key: CacheKey, variantKey: string): MemoryObject | undefined {
    return this.memory.peek(key, variantKey);
  }

  async variants(key: CacheKey): Promise<CacheEntryMeta[]> {
    const mem = this.memory.variantsSync(key);
    const disk = await this.disk.variants(key);
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

  createWriteStream(meta: CacheEntryMeta): Writable {
    const memory = this.memory;
    const diskStore = this.disk;
    const memMax = this.memoryObjectMax;
    let mem: Writable | undefined = meta.size <= memMax ? memory.createWriteStream(meta) : undefined;
    let disk: Writable | undefined;
    // A failing disk costs the disk copy only: the memory copy and the caller carry on.
    const openDisk = (m: CacheEntryMeta): Writable => {
      const d = diskStore.createWriteStream(m);
      d.on('error', () => { if (disk === d) disk = undefined; });
      return d;
    };
    if (meta.volatile !== true) disk = openDisk(meta);
    // Volatile and of unknown length: the first bytes are kept until the body is known to reach
    // nonVolatileSize (then it goes to disk as well) or ends below it (memory only).
    const spillAt = meta.volatile === true ? meta.volatileUpTo : undefined;
    let early: Buffer[] | undefined = spillAt === undefined ? undefined : [];
    let bytes = 0;
    return new Writable({
      highWaterMark: 64 * 1024,
      write(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        if (mem !== undefined && bytes > memMax) { mem.destroy(); mem = undefined; }
        mem?.write(chunk);
        if (early !== undefined) {
          if (bytes < spillAt!) { early.push(chunk); cb(); return; }
          disk = openDisk({ ...meta, volatile: false, volatileUpTo: undefined });
          for (const c of early) disk.write(c);
          early = undefined;
        }
        if (disk === undefined || disk.write(chunk)) { cb(); return; }
        const d = disk;
        const done = () => { d.off('drain', done); d.off('close', done); cb(); };
        d.on('drain', done);
        d.on('close', done);
      },
      final(cb) {
        // Not kept in memory: an older memory copy of this variant would now shadow the new one.
        if (mem === undefined) memory.deleteSync(meta.key, meta.variantKey);
        // 'finish' of this stream means "visible in the store", so wait for both copies.
        const sinks = [mem, disk].filter((w) => w !== undefined);
        let left = sinks.length;
        if (left === 0) { cb(); return; }
        for (const w of sinks) {
          let seen = false;
          const done = () => { if (!seen) { seen = true; if (--left === 0) cb(); } };
          w.once('finish', done);
          w.once('close', done);
          w.end();
        }
      },
      destroy(err, cb) {
        mem?.destroy();
        disk?.destroy();
        cb(err);
      },
    });
  }

  async updateMeta(key: CacheKey, variantKey: string, patch: Patch): Promise<boolean> {
    const inMemory = this.memory.updateMetaSync(key, variantKey, patch);
    const onDisk = await this.disk.updateMeta(key, variantKey, patch);
    return inMemory || onDisk;
  }

  async delete(key: CacheKey, variantKey?: string): Promise<number> {
    const fromMemory = this.memory.deleteSync(key, variantKey);
    const onDisk = await this.disk.variants(key);
    const fromDisk = variantKey === undefined ? onDisk.map((m) => m.variantKey) : onDisk.some((m) => m.variantKey === variantKey) ? [variantKey] : [];
    await this.disk.delete(key, variantKey);
    return new Set([...fromMemory, ...fromDisk]).size;
  }

  /**
   * Prefix operations of the management API. Memory is per process, so every worker must run
   * them (over IPC); `diskToo: false` lets all but one worker skip the shared index.
   */
  async listByPrefix(vhost: string, prefix: string, limit = 1000): Promise<(DiskRecord | MemoryObject)[]> {
    const disk = this.disk.listByPrefix(vhost, prefix, limit);
    const seen = new Set(disk.map((r) => `${r.key.url}\0${r.variantKey}`));
    const memOnly = this.memory.listByPrefix(vhost, prefix).filter((m) => !seen.has(`${m.key.url}\0${m.variantKey}`));
    return [...disk, ...memOnly].slice(0, limit);
  }

  async deleteByPrefix(vhost: string, prefix: string, opts: { diskToo?: boolean } = {}): Promise<number> {
    const m = this.memory.deleteByPrefix(vhost, prefix);
    const d = opts.diskToo === false ? 0 : await this.disk.deleteByPrefix(vhost, prefix);
    return Math.max(m, d);
  }

  async markByPrefix(vhost: string, prefix: string, mark: PrefixMark, opts: { diskToo?: boolean } = {}): Promise<number> {
    const m = this.memory.markByPrefix(vhost, prefix, mark);
    const d = opts.diskToo === false ? 0 : await this.disk.markByPrefix(vhost, prefix, mark);
    return Math.max(m, d);
  }

  async close(): Promise<void> {
    await this.memory.close();
    await this.disk.close();
  }
}
