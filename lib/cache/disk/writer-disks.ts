// The cache disks as the writer thread (writer-core.ts) sees them, apart from the objects it
// writes: which disks an object may go to, each disk's status and run of I/O errors (a disk is
// taken out of service after maxConsecutiveErrors, for every process, through the index), and
// the creation of an object's file on the first disk that takes it. Synchronous, like the rest
// of the thread (see writer-core.ts).
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { finalPath, tempPath } from '../disk-files.js';
import type { IndexDb } from '../index-db.js';
import type { WriterInit } from './protocol.js';
import { isIoError, unlinkQuiet, writeAll, type Obj } from './writer-io.js';

interface DiskState { path: string; quota: number; status: 'Normal' | 'Invalid'; errors: number }

type Status = DiskState['status'];

export class WriterDisks {
  private readonly disks: DiskState[];
  /** Disks this thread took out of service since the last reply. */
  private changes: [number, Status][] = [];

  /**
   * `index`: the shared index, where a disk taken out of service is marked (and read back).
   * `report` hears disk errors (3001) and disks taken out of service (3002), for the error log.
   */
  constructor(
    private readonly init: WriterInit, private readonly index: () => IndexDb,
    private readonly report?: (code: '3001' | '3002', detail: string) => void,
  ) {
    this.disks = init.disks.map((d) => ({ ...d, errors: 0 }));
  }

  quota(idx: number): number {
    return this.disks[idx]!.quota;
  }

  /** The final path of an object's file on its disk. */
  finalPath(o: Obj): string {
    return finalPath(this.disks[o.disk]!.path, o.fid);
  }

  /** A write on the disk succeeded: its run of errors ends. */
  succeeded(idx: number): void {
    this.disks[idx]!.errors = 0;
  }

  /** The usable disks for an object, preferred first. */
  pick(hash: string): number[] {
    const ok = this.disks.flatMap((d, i) => (d.status === 'Normal' ? [i] : []));
    if (ok.length < 2) return ok;
    // A stable start per object spreads objects over the disks; the rest are fallbacks.
    const start = parseInt(hash.slice(0, 8), 16) % ok.length;
    return [...ok.slice(start), ...ok.slice(0, start)];
  }

  maxObjectBytes(idx: number): number {
    return Math.min(this.init.maxObjectBytes ?? Infinity, this.disks[idx]?.quota ?? 0);
  }

  /**
   * Creates the temp file on the first candidate disk that takes it; a disk that fails here is
   * skipped for this object, so writes move to the other disks even before the failing one
   * reaches its error limit.
   */
  createTemp(o: Obj): void {
    for (const idx of o.candidates) {
      if (this.disks[idx]!.status !== 'Normal') continue;
      const tmp = tempPath(this.disks[idx]!.path, o.fid);
      try {
        o.fd = openSync(tmp, 'wx');
        o.tmp = tmp;
        o.disk = idx;
        return;
      } catch (err) {
        if (!isIoError(err)) throw err;
        this.ioError(idx, err);
      }
    }
    throw Object.assign(new Error('no usable cache disk'), { code: 'ENOCACHEDISK' });
  }

  /**
   * A body that arrived whole goes straight to its final name: open, one write, close, no
   * rename. That is as crash-safe as the temp file: no reader finds a body file before its row
   * commits, so a process killed mid-write leaves a file no row names, just like one killed
   * between a rename and the commit. Returns the path; disks that fail are skipped (createTemp).
   * The caller releases the object's gathered chunks.
   */
  writeWhole(o: Obj): string {
    for (const idx of o.candidates) {
      if (this.disks[idx]!.status !== 'Normal') continue;
      const path = finalPath(this.disks[idx]!.path, o.fid);
      let fd = -1;
      try {
        try {
          fd = openSync(path, 'wx');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
          // The fan-out directory was removed under us (operator cleanup): recreate it once.
          mkdirSync(dirname(path), { recursive: true });
          fd = openSync(path, 'wx');
        }
        if (o.pending.length > 0) writeAll(fd, o.pending);
        closeSync(fd);
        o.disk = idx;
        this.disks[idx]!.errors = 0;
        return path;
      } catch (err) {
        if (fd >= 0) { try { closeSync(fd); } catch { /* already failing */ } unlinkQuiet(path); }
        if (!isIoError(err)) throw err;
        this.ioError(idx, err);
      }
    }
    throw Object.assign(new Error('no usable cache disk'), { code: 'ENOCACHEDISK' });
  }

  ioError(idx: number, err: unknown): void {
    const d = this.disks[idx];
    if (d === undefined || d.status === 'Invalid') return;
    this.report?.('3001', `${d.path}: ${(err as Error).message}`);
    if (++d.errors < this.init.maxConsecutiveErrors) return;
    d.status = 'Invalid';
    this.report?.('3002', `${d.path} after ${d.errors} consecutive errors`);
    this.changes.push([idx, 'Invalid']);
    try { this.index().setDiskStatus(idx, 'Invalid'); } catch { /* the local state still holds */ }
  }

  /** The disks taken out of service since the last call (for the reply to the main thread). */
  takeChanges(): [number, Status][] | undefined {
    if (this.changes.length === 0) return undefined;
    const c = this.changes;
    this.changes = [];
    return c;
  }

  /** Statuses other processes changed (a disk they marked Invalid). */
  refresh(): void {
    try {
      for (const row of this.index().disks()) {
        const d = this.disks[row.idx];
        if (d !== undefined) d.status = row.status;
      }
    } catch {
      // Busy or closing: the next period reads them again.
    }
  }
}
