// Installing the linked files of an upload where the service reads them, with a way back: the
// previous content of every replaced file is kept in memory until the runtime accepted the
// setting, and put back when it refused it.
import fs from 'node:fs/promises';
import { writeFileAtomic } from './atomic.js';
import type { Candidate } from './candidate.js';
import { sourceOf } from './package.js';

export type Undo = () => Promise<void>;

export async function installLinked(c: Candidate): Promise<Undo> {
  const previous: Array<{ target: string; data: Buffer | undefined }> = [];
  const undo: Undo = async () => {
    for (const p of previous.reverse()) {
      if (p.data === undefined) await fs.rm(p.target, { force: true });
      else await writeFileAtomic(p.target, p.data);
    }
  };
  if (c.staged === undefined) return undo;
  try {
    const done = new Set<string>();
    for (const r of c.refs) {
      const src = await sourceOf(r, c.staged);
      if (src === undefined || src === r.target || done.has(r.target)) continue;
      done.add(r.target);
      const data = await fs.readFile(src);
      let old: Buffer | undefined;
      try {
        old = await fs.readFile(r.target);
      } catch { /* a new file */ }
      if (old !== undefined && old.equals(data)) continue;
      previous.push({ target: r.target, data: old });
      await writeFileAtomic(r.target, data);
    }
  } catch (err) {
    await undo();
    throw err;
  }
  return undo;
}
