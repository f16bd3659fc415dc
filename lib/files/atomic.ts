// Crash-safe file replacement: the new content goes to a temporary file in the same directory,
// is fsynced, renamed over the target (atomic on POSIX), and the directory is fsynced so the
// rename itself survives a power loss. A crash at any moment leaves the old or the new file.
// A library of its own: the setting lifecycle, the license and release packages all write
// through it (under lib/lifecycle it tied lib/license and lib/lifecycle to each other).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Prefix of the temporary files, so that recovery can remove leftovers of a crash. */
const TEMP_PREFIX = '.tmp-';

export async function fsyncDir(dir: string): Promise<void> {
  const h = await fs.open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/** Writes data to a new temp file beside `file` and fsyncs it; returns the temp file's path. */
export async function writeSyncedTemp(file: string, data: string | Buffer): Promise<string> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `${TEMP_PREFIX}${path.basename(file)}.${randomBytes(6).toString('hex')}`);
  const h = await fs.open(tmp, 'w', 0o644);
  try {
    await h.writeFile(data);
    await h.sync();
  } finally {
    await h.close();
  }
  return tmp;
}

export async function writeFileAtomic(file: string, data: string | Buffer): Promise<void> {
  const dir = path.dirname(file);
  const tmp = await writeSyncedTemp(file, data);
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await fsyncDir(dir);
}

/** Removes temporary files a crash left in `dir`. */
export async function removeTempFiles(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return;
  }
  await Promise.all(names.filter((n) => n.startsWith(TEMP_PREFIX)).map((n) => fs.rm(path.join(dir, n), { force: true, recursive: true })));
}
