// Helpers of the writer thread (synchronous: the thread is off the request path).
import crypto from 'node:crypto';
import { unlinkSync, writevSync } from 'node:fs';
import type { NewRow } from '../index-db.js';
import { flagsForInvalidated } from '../prefix.js';
import type { WireMeta } from './protocol.js';

/** One object being written by the thread. */
export interface Obj {
  id: number;
  meta: WireMeta;
  hash: string;
  fid: string;
  /** Usable disks for this object, preferred first; the file goes on the first that takes it. */
  candidates: number[];
  disk: number;
  tmp: string;
  fd: number;
  pending: Buffer[];
  pendingBytes: number;
  bytes: number;
  tooBig: boolean;
  ended: boolean;
}

/** The object's hash key (fileinfo's HashKey; it also spreads objects over the disks). */
export function keyHash(m: WireMeta): string {
  const key = `${m.vhost}\0${m.url}\0${m.variant}`;
  // crypto.hash (node 20.12) is the one-shot form: no Hash object per object.
  return typeof crypto.hash === 'function' ? crypto.hash('sha1', key, 'hex') : crypto.createHash('sha1').update(key).digest('hex');
}

export function rowFor(o: Obj, path: string, now: number): NewRow {
  const m = o.meta;
  const invalidated = m.invalidated;
  return {
    vhost: m.vhost, url: m.url, variant: m.variant, vary: m.vary,
    status: m.status, headers: m.headers, request_time: Math.round(m.requestTime),
    cached_at: Math.round(m.cachedAt), stale_at: Math.round(m.staleAt), delete_at: Math.round(m.deleteAt),
    created_at: now, updated_at: now, size: o.bytes, disk: o.disk, fid: o.fid, path, last_access: now,
    invalidated, flags: flagsForInvalidated(0, invalidated), hash_key: o.hash, tags: m.tags,
  };
}

/**
 * A copy of bytes of shared memory (the ring) in memory of its own, placed at the same offset
 * within an 8-byte word as the bytes copied: V8 copies out of shared memory byte by byte when
 * source and target are aligned differently (Buffer.from of a 4 KB ring view took 2.4 us, this
 * 0.44; see writer-channel.ts WORD_ALIGN). Up to 8 bytes of the allocation stay unused.
 */
export function copyOfShared(view: Buffer): Buffer {
  const own = Buffer.allocUnsafe(view.length + 8);
  const skip = (view.byteOffset - own.byteOffset) & 7;
  const copy = own.subarray(skip, skip + view.length);
  view.copy(copy);
  return copy;
}

/** Writes every byte of the chunks (a writev may write only part of them). */
export function writeAll(fd: number, chunks: Buffer[]): void {
  let rest = chunks;
  for (let rounds = 0; rest.length > 0 && rounds < 1000; rounds++) {
    let skip = writevSync(fd, rest);
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

export function isIoError(err: unknown): boolean {
  return typeof (err as NodeJS.ErrnoException)?.code === 'string';
}

export function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone (another worker removed it) is the expected race; nothing else to do.
  }
}
