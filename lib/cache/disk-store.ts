// Disk cache: bodies as files under one or more cache directories ("Disk-Index" 0, 1, ...),
// each with a byte quota, and one SQLite index shared by every worker process of the node, so
// an object stored by one process is a hit in all of them and after a restart.
// Reads (index lookups, body streams) run here; the write path (body files, row commits,
// eviction) runs in one writer thread per store (lib/cache/disk/writer-core.ts).
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { cleanTemp, prepareDisk, unlinkQuiet } from './disk-files.js';
import { DiskSink, DiskWriter } from './disk-write.js';
import { WriterChannel } from './disk/writer-channel.js';
import { UrlDirectory } from './disk/directory.js';
import { DiskObject, rowToMeta, rowToRecord, type DiskRecord } from './disk/disk-object.js';
import { countCacheEvent } from './events.js';
import { IndexDb, type IndexRow, type Released } from './index-db.js';
import { INVALIDATED_HARDPURGED, type PrefixMark } from './prefix.js';
import { IndexCommands } from './disk/index-commands.js';
import type { CacheEntryMeta, CacheKey, CacheStore, CachedObject, NotModified, NotModifiedPatch } from './store.js';
import { FreshenQueue } from './disk/freshen-queue.js';

interface DiskDirOptions {
  path: string;
  /** Bytes of bodies this directory may hold. */
  quota: number;
}

/** Writes remembered for a filter handed over while they were under way (DiskStore.useDirectory). */
const RECENT_WRITES = 1024;

/** How long an invalidation is remembered for fetches that commit after it. */
const INVALIDATION_KEEP_MS = 10 * 60_000;

export interface DiskStoreOptions {
  disks: DiskDirOptions[];
  /** UDP port of the node's log listener; the writer thread reports disk errors there. */
  logPort?: number | undefined;
  /** Index file; default `index.sqlite` in the first cache directory. */
  indexPath?: string;
  /** How long a writer waits for another process's write lock (default 5000 ms). */
  busyTimeoutMs?: number;
  mmapBytes?: number;
  /** Period of the batched last-access writes and of re-reading shared disk states (1000 ms). */
  flushIntervalMs?: number;
  /** Period of dropping rows past their deleteAt (60000 ms; 0 disables). */
  sweepIntervalMs?: number;
  /** Consecutive I/O errors after which a disk is marked Invalid (default 3). */
  maxConsecutiveErrors?: number;
  /** Larger bodies are not stored (default: the quota of the chosen disk). */
  maxObjectBytes?: number;
  /** Temp files older than this are removed at open even if their writer lives (1 hour). */
  tempMaxAgeMs?: number;
  /** Body bytes in flight to the writer thread before writes wait (64 MiB). */
  writerMaxInFlightBytes?: number;
  /**
   * Rows completed within this window share one index transaction (5 ms: on a stream of misses
   * each commit's fixed cost is then shared by a few dozen rows; the memory copy is served at
   * once, and other workers see the row this much later at most).
   */
  writerCommitDelayMs?: number;
  /** Clock of the last-access times and marks set here (Date.now); tests pass their own. */
  now?: () => number;
}

export type DiskStatus = 'Normal' | 'Invalid';

export interface DiskInfo {
  path: string;
  status: DiskStatus;
  used: number;
  quota: number;
}

/** What applyByPrefix shows of a row to choose and mark it. */
export type { PrefixRowView } from './disk/index-commands.js';

interface DiskState extends DiskInfo {
  errors: number;
}

type Patch = Parameters<CacheStore['updateMeta']>[2];

export class DiskStore implements CacheStore {
  readonly index: IndexDb;
  private readonly disks: DiskState[];
  private readonly touches = new Map<number, number>();
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;
  private readonly writer: WriterChannel;
  /** Bodies larger than this fit no disk: the write streams stop sending them early. */
  private readonly maxObjectBytes: number;
  private readonly now: () => number;
  /** URLs the index may hold, filled by the writer thread (directory.ts); undefined until built. */
  private directory: UrlDirectory | undefined;
  /** The keys of the last RECENT_WRITES writes opened here (a ring), see useDirectory. */
  private readonly recentHosts: string[] = [];
  private readonly recentUrls: string[] = [];
  private recentAt = 0;
  private readonly freshens: FreshenQueue;

  constructor(opts: DiskStoreOptions) {
    if (opts.disks.length === 0) throw new RangeError('DiskStore needs at least one cache directory');
    this.now = opts.now ?? Date.now;
    const indexPath = opts.indexPath ?? join(opts.disks[0]!.path, 'index.sqlite');
    mkdirSync(dirname(indexPath), { recursive: true });
    this.index = new IndexDb(indexPath, { busyTimeoutMs: opts.busyTimeoutMs ?? 5000, mmapBytes: opts.mmapBytes });
    this.disks = opts.disks.map((d) => {
      const path = resolve(d.path);
      const ok = prepareDisk(path);
      if (ok) cleanTemp(path, opts.tempMaxAgeMs ?? 3_600_000);
      return { path, quota: d.quota, used: 0, status: ok ? 'Normal' : 'Invalid', errors: 0 } satisfies DiskState;
    });
    this.index.syncDisks(this.disks);
    this.refreshDisks();
    const every = (ms: number, fn: () => void) => { if (ms > 0) this.timers.push(setInterval(fn, ms).unref()); };
    every(opts.flushIntervalMs ?? 1000, () => this.flushTouches());
    every(opts.sweepIntervalMs ?? 60_000, () => { void this.sweepExpired(); });
    this.maxObjectBytes = Math.min(opts.maxObjectBytes ?? Infinity, Math.max(...this.disks.map((d) => d.quota)));
    const maxInFlight = opts.writerMaxInFlightBytes ?? 64 * 1024 * 1024;
    // Started now, not at the first write, so the first miss does not wait for its start-up; it
    // opens its own connection to the same index.
    this.writer = new WriterChannel({
      indexPath, disks: this.disks.map((d) => ({ path: d.path, quota: d.quota, status: d.status })),
      busyTimeoutMs: opts.busyTimeoutMs ?? 5000, mmapBytes: opts.mmapBytes, maxObjectBytes: opts.maxObjectBytes,
      maxConsecutiveErrors: opts.maxConsecutiveErrors ?? 3, commitDelayMs: opts.writerCommitDelayMs ?? 5,
      refreshMs: opts.flushIntervalMs ?? 1000, maxInFlightBytes: maxInFlight, logPort: opts.logPort,
    }, maxInFlight, (idx, status) => { const d = this.disks[idx]; if (d !== undefined) d.status = status; },
    (buffer) => this.useDirectory(buffer));
    this.writer.start();
    this.freshens = new FreshenQueue((op) => this.writer.meta(op), this.now);
  }

  async variants(key: CacheKey): Promise<CacheEntryMeta[]> {
    return this.variantsSync(key);
  }

  candidates(key: CacheKey): CacheEntryMeta[] {
    return this.candidatesSync(key);
  }

  /**
   * A filter from the writer thread (the first, or a larger one): it holds every row committed
   * before the thread handed it over; writes opened here since may commit after that, so the
   * recent ones are added here too.
   */
  private useDirectory(buffer: SharedArrayBuffer): void {
    const dir = new UrlDirectory(buffer);
    for (let i = 0; i < this.recentHosts.length; i++) dir.add(this.recentHosts[i]!, this.recentUrls[i]!);
    this.directory = dir;
  }

  /** A write of the key opens: known to this process's requests at once. */
  private opening(key: CacheKey): void {
    this.directory?.add(key.vhost, key.url);
    const i = this.recentAt++ % RECENT_WRITES;
    this.recentHosts[i] = key.vhost;
    this.recentUrls[i] = key.url;
  }

  /**
   * variantsSync for a request: a URL the directory has never seen is a miss without an index
   * query (the query was the largest cost of a miss); see directory.ts for what that may miss.
   */
  candidatesSync(key: CacheKey): CacheEntryMeta[] {
    if (this.directory !== undefined && !this.directory.mayHave(key.vhost, key.url)) return [];
    return this.variantsSync(key);
  }

  /** The index lookup is synchronous (better-sqlite3). */
  variantsSync(key: CacheKey): CacheEntryMeta[] {
    const rows = this.index.rowsOfUrl(key.vhost, key.url);
    if (rows.length === 0) return [];
    return rows.filter((r) => this.usable(r.disk) && r.invalidated !== INVALIDATED_HARDPURGED).map(rowToMeta);
  }

  async get(key: CacheKey, variantKey: string): Promise<CachedObject | undefined> {
    return this.getSync(key, variantKey);
  }

  /** The index lookup is synchronous (better-sqlite3); the body is read only by openBody. */
  getSync(key: CacheKey, variantKey: string): (CachedObject & { path: string }) | undefined {
    const row = this.index.row(key.vhost, key.url, variantKey);
    if (row === undefined || !this.usable(row.disk) || row.invalidated === INVALIDATED_HARDPURGED) return undefined;
    this.touches.set(row.id, this.now());
    return new DiskObject(row, this);
  }

  createWriteStream(meta: CacheEntryMeta): Writable {
    this.opening(meta.key);
    return new DiskWriter(this.writer, meta, this.maxObjectBytes);
  }

  /** createWriteStream without the stream: for the tiered store's write path. */
  openSink(meta: CacheEntryMeta): DiskSink {
    this.opening(meta.key);
    return new DiskSink(this.writer, meta, this.maxObjectBytes);
  }

  /**
   * Committed by the writer thread (an IMMEDIATE transaction with a busy timeout must not block
   * the event loop); resolves once the change is visible to every worker.
   */
  async updateMeta(key: CacheKey, variantKey: string, patch: Patch): Promise<boolean> {
    const found = await this.writer.meta({ t: 'update', vhost: key.vhost, url: key.url, variant: variantKey, patch, now: this.now() });
    return found === 1;
  }

  /**
   * CacheStore.freshen: the 304 waits, one per object (the latest), and goes to the writer thread
   * with the others about a second later (disk/freshen-queue.ts), or with `soon` at the end of
   * this turn. `_patch`: the writer merges the 304 into each row as the row is then.
   */
  freshen(key: CacheKey, variantKey: string, _patch: NotModifiedPatch | undefined, nm: NotModified, soon = false): void {
    if (!this.closed) this.freshens.add(key, variantKey, nm, soon);
  }

  freshened(): Promise<void> {
    return this.freshens.write();
  }

  /**
   * Marks every variant of the URLs stale and logs the invalidation, in one transaction of the
   * writer thread; resolves once it is committed.
   */
  /** `now`: when the invalidation counts from (copies received before it land stale). */
  async invalidateUrls(vhost: string, urls: readonly string[], now = this.now()): Promise<void> {
    await this.writer.meta({ t: 'invalidate', vhost, urls: [...urls], now });
  }

  async delete(key: CacheKey, variantKey?: string): Promise<number> {
    const released: Released = { paths: [] };
    const n = this.index.batch(() => {
      const rows = variantKey === undefined
        ? this.index.rowsOfUrl(key.vhost, key.url)
        : [this.index.row(key.vhost, key.url, variantKey)].filter((r) => r !== undefined);
      for (const r of rows) {
        this.index.removeRow(r, released);
        // A hard purge's tombstone was counted as erased by the command.
        if (r.invalidated !== INVALIDATED_HARDPURGED) countCacheEvent(r.vhost, 'erase');
      }
      return rows.length;
    });
    await this.unlinkAll(released);
    return n;
  }

  /** Index rows of a vhost whose URL starts with prefix, in URL order (fileinfo, purge lists). */
  listByPrefix(vhost: string, prefix: string, limit = 1000): DiskRecord[] {
    return this.index.prefixPage(vhost, prefix, undefined, limit).map(rowToRecord);
  }

  /** Deletes (hardpurge) every variant under the prefix, in bounded batches. */
  async deleteByPrefix(vhost: string, prefix: string): Promise<number> {
    return this.eachPrefixPage(vhost, prefix, (rows, released) => {
      for (const r of rows) {
        this.index.removeRow(r, released);
        // A hard purge's tombstone was counted as erased by the command.
        if (r.invalidated !== INVALIDATED_HARDPURGED) countCacheEvent(r.vhost, 'erase');
      }
    });
  }

  /** Marks (purge / expire / expireafter) every variant under the prefix. */
  async markByPrefix(vhost: string, prefix: string, mark: PrefixMark): Promise<number> {
    const now = this.now();
    return this.eachPrefixPage(vhost, prefix, (rows) => this.index.markRows(rows, mark, now));
  }

  /** The operator commands of the purge family over the index (disk/index-commands.ts). */
  get commands(): IndexCommands {
    return this.indexCommands ??= new IndexCommands(this.index, this.now, (released) => this.unlinkAll(released));
  }
  private indexCommands: IndexCommands | undefined;

  /** Drops rows whose deleteAt has passed; returns how many. */
  async sweepExpired(now = this.now(), limit = 500): Promise<number> {
    if (this.closed) return 0;
    const released: Released = { paths: [] };
    const n = this.index.batch(() => {
      const rows = this.index.expiredRows(now, limit);
      for (const r of rows) {
        this.index.removeRow(r, released);
        // A hard purge's tombstone was counted as erased by the command.
        if (r.invalidated !== INVALIDATED_HARDPURGED) countCacheEvent(r.vhost, 'erase');
      }
      // A fetch that started before an invalidation and commits after it lands stale (insertRow
      // reads these rows); none is in flight for 10 minutes, so older rows are only weight.
      this.index.pruneInvalidations(now - INVALIDATION_KEEP_MS);
      return rows.length;
    });
    await this.unlinkAll(released);
    return n;
  }

  /** Files and index changes waiting for the writer thread (System.WaitingFiles2Write). */
  get waitingWrites(): number {
    return this.writer.operations;
  }

  /** Body files of each host open for reading now (VirtualHost FileOpened, with the writes). */
  private readonly reading = new Map<string, number>();

  /** A body file of `vhost` was opened for reading: counted until its stream closes. */
  readOpened(vhost: string, stream: Readable): void {
    this.reading.set(vhost, (this.reading.get(vhost) ?? 0) + 1);
    stream.once('close', () => {
      const n = (this.reading.get(vhost) ?? 1) - 1;
      if (n > 0) this.reading.set(vhost, n); else this.reading.delete(vhost);
    });
  }

  /** Body files of a host open now in this process, for reading or being written. */
  filesOpen(vhost: string): number {
    return (this.reading.get(vhost) ?? 0) + (this.writer.writingByHost.get(vhost) ?? 0);
  }

  /** This process's view of each disk's status, without reading the index (once a second). */
  statuses(): DiskStatus[] {
    return this.disks.map((d) => d.status);
  }

  diskStatus(): DiskInfo[] {
    if (!this.closed) this.refreshDisks();
    return this.disks.map((d) => ({ path: d.path, status: d.status, used: d.used, quota: d.quota }));
  }

  /** Re-reads quota usage and statuses other processes may have changed. */
  refreshDisks(): void {
    for (const row of this.index.disks()) {
      const d = this.disks[row.idx];
      if (d === undefined) continue;
      d.used = row.used;
      d.status = row.status;
    }
  }

  /** Writes the batched last-access times now (also runs every flushIntervalMs). */
  flushTouches(): void {
    if (this.closed) return;
    const batch = new Map(this.touches);
    this.touches.clear();
    try {
      this.index.touchMany(batch);
      this.refreshDisks();
    } catch {
      // Another process holds the write lock: keep the times for the next round (bounded).
      if (this.touches.size < 100_000) for (const [id, at] of batch) if (!this.touches.has(id)) this.touches.set(id, at);
    }
  }

  forgetMissing(row: IndexRow): void {
    if (this.closed) return;
    try {
      this.index.batch(() => {
        const cur = this.index.row(row.vhost, row.url, row.variant);
        if (cur !== undefined && cur.fid === row.fid) this.index.removeRow(cur, { paths: [] });
      });
    } catch {
      // The next failed read tries again.
    }
  }

  /** Waits for every write already ended (their rows are committed), then closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    void this.freshens.write();
    await this.writer.close();
    if (this.closed) return;
    this.flushTouches();
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.index.close();
  }

  private usable(disk: number): boolean {
    return this.disks[disk]?.status === 'Normal';
  }

  private async eachPrefixPage(vhost: string, prefix: string, fn: (rows: IndexRow[], released: Released) => void): Promise<number> {
    let after: [string, string] | undefined;
    let total = 0;
    for (let pages = 0; pages < 1_000_000; pages++) {
      const released: Released = { paths: [] };
      const n = this.index.batch(() => {
        const rows = this.index.prefixPage(vhost, prefix, after, 500);
        if (rows.length > 0) { fn(rows, released); const last = rows[rows.length - 1]!; after = [last.url, last.variant]; }
        return rows.length;
      });
      total += n;
      await this.unlinkAll(released);
      if (n < 500) break;
      // Let requests run between pages of a large purge.
      await new Promise((r) => setImmediate(r));
    }
    return total;
  }

  private async unlinkAll(released: Released): Promise<void> {
    await Promise.all(released.paths.map(unlinkQuiet));
  }
}
