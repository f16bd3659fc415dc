// Installing the linked files of an upload (certificates, basehost files) where the service
// reads them, in two steps so that setting.json stays the one commit point: stage() writes each
// new file next to its target as a synced temporary file; after setting.json was written,
// commit() renames them over the targets. Before that, discard() removes them and nothing
// changed. A crash between setting.json and the renames is completed at the next start from the
// history package (SettingLifecycle.recover), and temporary leftovers are removed there too.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir, removeTempFiles, writeSyncedTemp } from '../files/atomic.js';
import type { Candidate } from './candidate.js';
import { sourceOf, type LinkedRef } from './package.js';

export interface Staged {
  /** Targets that get new content. */
  readonly targets: string[];
  commit(): Promise<void>;
  discard(): Promise<void>;
}

export async function stageLinked(c: Pick<Candidate, 'refs' | 'staged'>): Promise<Staged> {
  const moves: Array<{ tmp: string; target: string }> = [];
  const discard = async (): Promise<void> => {
    await Promise.all(moves.map((m) => fs.rm(m.tmp, { force: true })));
  };
  const done = new Set<string>();
  try {
    for (const r of c.refs) {
      const src = await sourceOf(r, c.staged);
      if (src === undefined || src === r.target || done.has(r.target)) continue;
      done.add(r.target);
      const data = await fs.readFile(src);
      const old = await fs.readFile(r.target).catch(() => undefined);
      if (old !== undefined && old.equals(data)) continue;
      moves.push({ tmp: await writeSyncedTemp(r.target, data), target: r.target });
    }
  } catch (err) {
    await discard();
    throw err;
  }
  return {
    targets: moves.map((m) => m.target),
    discard,
    commit: async () => {
      for (const m of moves) await fs.rename(m.tmp, m.target);
      for (const dir of new Set(moves.map((m) => path.dirname(m.target)))) await fsyncDir(dir);
    },
  };
}

/** Removes temporary files a crash left beside linked files. */
export async function removeLinkedTemps(refs: LinkedRef[]): Promise<void> {
  for (const dir of new Set(refs.map((r) => path.dirname(r.target)))) await removeTempFiles(dir);
}
