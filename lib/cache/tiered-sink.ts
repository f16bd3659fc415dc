// The write path of the tiered store for one new object: the memory copy gathered here and put
// in memory at the end, the disk copy handed to the disk store's writer thread as it arrives.
// A plain object rather than a stream, because it runs once per cache miss: the miss path
// writes into it directly, and TieredStore.createWriteStream wraps it for the store contract.
import type { DiskSink } from './disk-write.js';
import type { DiskStore } from './disk-store.js';
import { joinChunks, type MemoryStore } from './memory-store.js';
import type { CacheEntryMeta } from './store.js';

/** Where a new object's body goes (TieredStore.openSink). */
export interface StoreSink {
  /** Takes a chunk (kept by reference for the memory copy). False: wait for onDrain first. */
  write(chunk: Buffer): boolean;
  /** cb once the store can take more (at once when it can now). */
  onDrain(cb: () => void): void;
  /**
   * The body is complete. cb once the object is visible in the store: in memory at once, and
   * on disk when the writer thread committed its row. A failing disk costs the disk copy only,
   * so cb gets no error.
   */
  end(cb: () => void): void;
  /** The body broke: nothing of it is kept (the disk copy is removed in the background). */
  abort(): void;
}

export class TieredSink implements StoreSink {
  /** The memory copy so far; null once the object is not kept in memory. */
  private chunks: Buffer[] | null;
  private bytes = 0;
  private disk: DiskSink | undefined;
  /**
   * A volatile object of unknown length: its first bytes, until the body is known to reach
   * meta.volatileUpTo (then it goes to disk as well) or ends below it (memory only).
   */
  private early: Buffer[] | undefined;
  /** An onDrain callback waiting for the disk (a failing disk must not strand it). */
  private waiter: (() => void) | undefined;
  private ended = false;

  constructor(private readonly memory: MemoryStore, private readonly diskStore: DiskStore, private readonly memMax: number,
    private readonly meta: CacheEntryMeta) {
    this.chunks = meta.size <= memMax ? [] : null;
    if (meta.volatile !== true) this.disk = this.openDisk(meta);
    else if (meta.volatileUpTo !== undefined) this.early = [];
  }

  write(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.chunks !== null) {
      if (this.bytes > this.memMax) this.chunks = null;
      // One-element array for a first chunk (push() on an empty one reserves room for 16).
      else if (this.chunks.length === 0) this.chunks = [chunk];
      else this.chunks.push(chunk);
    }
    if (this.early !== undefined) {
      if (this.bytes < this.meta.volatileUpTo!) { this.early.push(chunk); return true; }
      const d = this.disk = this.openDisk({ ...this.meta, volatile: false, volatileUpTo: undefined });
      for (const c of this.early) d.send(c);
      this.early = undefined;
    }
    const disk = this.disk;
    if (disk === undefined) return true;
    disk.send(chunk);
    return disk.ready();
  }

  onDrain(cb: () => void): void {
    const disk = this.disk;
    if (disk === undefined) { cb(); return; }
    this.waiter = cb;
    disk.pace(() => this.wake(cb));
  }

  end(cb: () => void): void {
    if (this.ended) return;
    this.ended = true;
    const { memory, meta } = this;
    // Not kept in memory: an older memory copy of this variant would now shadow the new one.
    if (this.chunks === null) memory.deleteSync(meta.key, meta.variantKey);
    else memory.put(meta, joinChunks(this.chunks, this.bytes));
    this.chunks = null;
    this.early = undefined;
    const disk = this.disk;
    if (disk === undefined) cb();
    else disk.end(() => cb());
  }

  /**
   * After end() this only reaches a disk copy not yet committed (the memory copy is already
   * served); once end()'s callback ran it does nothing (a Writable destroys itself after
   * 'finish').
   */
  abort(): void {
    this.chunks = null;
    this.early = undefined;
    this.ended = true;
    this.disk?.abort();
    this.waiter = undefined;
  }

  private openDisk(m: CacheEntryMeta): DiskSink {
    const d = this.diskStore.openSink(m);
    d.onFail = () => {
      if (this.disk !== d) return;
      this.disk = undefined;
      this.wake(this.waiter);
    };
    return d;
  }

  private wake(cb: (() => void) | undefined): void {
    if (cb === undefined || this.waiter !== cb) return;
    this.waiter = undefined;
    cb();
  }
}
