// File layout of a cache directory:
//   <dir>/tmp/<fid>.<pid>.tmp   bodies being written (renamed into place once complete)
//   <dir>/<fid[0..2]>/<fid>     complete bodies, referenced by index rows
// Temp files live in the same directory tree as the final files so the rename is atomic.
// The synchronous calls here run only when a store opens or in the writer thread, never on the
// request path.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * File ids of one writer: a random 64-bit prefix per writer (unique across processes and
 * restarts) plus a counter, instead of 12 random bytes per object. The first two characters are
 * the low byte of the counter so files still spread evenly over the 256 fan-out directories.
 */
export function fidSource(): () => string {
  const prefix = randomBytes(8).toString('hex');
  let n = 0;
  return () => {
    n++;
    return (n & 0xff).toString(16).padStart(2, '0') + prefix + n.toString(36);
  };
}

export function tempPath(dir: string, fid: string): string {
  return join(dir, 'tmp', `${fid}.${process.pid}.tmp`);
}

/** `dir` is absolute and normalised (DiskStore resolves it): joined without path.join's parse. */
export function finalPath(dir: string, fid: string): string {
  return `${dir}/${fid.slice(0, 2)}/${fid}`;
}

/** Creates the directory tree and proves it writable; false when the disk cannot be used. */
export function prepareDisk(dir: string): boolean {
  try {
    mkdirSync(join(dir, 'tmp'), { recursive: true });
    for (let i = 0; i < 256; i++) mkdirSync(join(dir, i.toString(16).padStart(2, '0')), { recursive: true });
    const probe = join(dir, 'tmp', `probe.${process.pid}.tmp`);
    writeFileSync(probe, 'ok');
    unlinkSync(probe);
    return true;
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes temp files left by writers that died (their pid is gone) or that are older than
 * maxAgeMs. Files of live sibling workers are in use and stay. Returns how many were removed.
 */
export function cleanTemp(dir: string, maxAgeMs: number, now = Date.now()): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(join(dir, 'tmp'));
  } catch {
    return 0;
  }
  for (const name of names) {
    const m = /\.(\d+)\.tmp$/.exec(name);
    if (m === null) continue;
    const file = join(dir, 'tmp', name);
    try {
      const pid = Number(m[1]);
      const stale = !alive(pid) || now - statSync(file).mtimeMs > maxAgeMs;
      if (stale) { unlinkSync(file); removed++; }
    } catch {
      // Vanished meanwhile (its writer finished or another worker cleaned it): nothing to do.
    }
  }
  return removed;
}

export async function unlinkQuiet(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch {
    // Already gone (another worker removed it) is the expected race; nothing else to do.
  }
}
