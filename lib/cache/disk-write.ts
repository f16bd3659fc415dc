// Write path of the disk store. Order matters for crash safety: body to a temp file, rename to
// its final name, and only then the index row (in a transaction). A process killed at any point
// leaves at most a temp file (cleaned at the next open) or an unreferenced final file, never a
// row pointing at a partial body.
import { mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { finalPath, newFid, tempPath, unlinkQuiet } from './disk-files.js';
import type { NewRow } from './index-db.js';
import type { CacheEntryMeta } from './store.js';

/** What a writer needs from its store. */
export interface WriterHost {
  /** Usable disks for this object, preferred first. */
  pickDisks(hashKey: string): number[];
  diskDir(idx: number): string;
  maxObjectBytes(idx: number): number;
  ioError(idx: number, err: unknown): void;
  ioOk(idx: number): void;
  hashKey(meta: CacheEntryMeta): string;
  rowFor(meta: CacheEntryMeta, disk: number, fid: string, path: string, size: number, hashKey: string): NewRow;
  /** Queues the row for the next index batch; resolves false when shouldCommit said no. */
  commit(row: NewRow, shouldCommit: () => boolean): Promise<boolean>;
  /** Removes a stored variant (a replacement too large to keep makes the old one outdated). */
  dropVariant(meta: CacheEntryMeta): Promise<unknown>;
}

export class DiskWriter extends Writable {
  private fh: FileHandle | undefined;
  private disk = -1;
  private readonly fid = newFid();
  private readonly hash: string;
  private tmp = '';
  private final_ = '';
  private bytes = 0;
  private tooBig = false;
  private renamed = false;
  private committed = false;
  private finishing: Promise<void> | undefined;

  constructor(private readonly host: WriterHost, private readonly meta: CacheEntryMeta) {
    super({ highWaterMark: 64 * 1024 });
    this.hash = host.hashKey(meta);
  }

  override _construct(cb: (err?: Error | null) => void): void {
    void this.openTemp().then(() => cb(), cb);
  }

  private async openTemp(): Promise<void> {
    // A disk that fails here is skipped for this object, so writes move to the other disks
    // even before the failing one reaches its error limit and is marked Invalid.
    for (const idx of this.host.pickDisks(this.hash)) {
      const tmp = tempPath(this.host.diskDir(idx), this.fid);
      try {
        this.fh = await open(tmp, 'wx');
        this.disk = idx;
        this.tmp = tmp;
        return;
      } catch (err) {
        this.host.ioError(idx, err);
      }
    }
    throw Object.assign(new Error('no usable cache disk'), { code: 'ENOCACHEDISK' });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this._writev([{ chunk }], cb);
  }

  override _writev(chunks: { chunk: Buffer }[], cb: (err?: Error | null) => void): void {
    let n = 0;
    for (const c of chunks) n += c.chunk.length;
    this.bytes += n;
    if (this.tooBig) { cb(); return; }
    if (this.bytes > this.host.maxObjectBytes(this.disk)) {
      // Not kept: stop spending disk on it, but let the caller finish writing normally.
      this.tooBig = true;
      void this.discardTemp().then(() => cb());
      return;
    }
    void writeAll(this.fh!, chunks.map((c) => c.chunk)).then(() => cb(), (err: Error) => {
      if (!this.destroyed) this.host.ioError(this.disk, err);
      cb(err);
    });
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.finishing = this.complete();
    this.finishing.then(() => cb(), cb);
  }

  private async complete(): Promise<void> {
    if (this.tooBig) { await this.host.dropVariant(this.meta); return; }
    const fh = this.fh!;
    this.fh = undefined;
    try {
      await fh.close();
      this.final_ = finalPath(this.host.diskDir(this.disk), this.fid);
      try {
        await rename(this.tmp, this.final_);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // The fan-out directory was removed under us (operator cleanup): recreate it once.
        await mkdir(dirname(this.final_), { recursive: true });
        await rename(this.tmp, this.final_);
      }
      this.renamed = true;
    } catch (err) {
      if (!this.destroyed) this.host.ioError(this.disk, err);
      throw err;
    }
    this.host.ioOk(this.disk);
    const row = this.host.rowFor(this.meta, this.disk, this.fid, this.final_, this.bytes, this.hash);
    // A destroy that lands while the row waits for its batch must still leave no entry.
    this.committed = await this.host.commit(row, () => !this.destroyed);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    void (async () => {
      if (this.finishing !== undefined) await this.finishing.catch(() => undefined);
      if (!this.committed) {
        await this.discardTemp();
        if (this.renamed) await unlinkQuiet(this.final_);
      }
    })().then(() => cb(err), () => cb(err));
  }

  private async discardTemp(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    if (fh !== undefined) await fh.close().catch(() => undefined);
    if (this.tmp !== '' && !this.renamed) await unlinkQuiet(this.tmp);
  }
}

/** Writes every byte of the chunks (a positional-free writev may write only part of them). */
async function writeAll(fh: FileHandle, chunks: Buffer[]): Promise<void> {
  let rest = chunks;
  for (let rounds = 0; rest.length > 0 && rounds < 1000; rounds++) {
    const { bytesWritten } = await fh.writev(rest);
    let skip = bytesWritten;
    const next: Buffer[] = [];
    for (const c of rest) {
      if (skip >= c.length) { skip -= c.length; continue; }
      next.push(skip > 0 ? c.subarray(skip) : c);
      skip = 0;
    }
    rest = next;
  }
  if (rest.length > 0) throw Object.assign(new Error('short write to cache file'), { code: 'EIO' });
}
