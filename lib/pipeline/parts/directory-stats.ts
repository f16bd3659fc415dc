// Directory statistics (functions.statistics.directory; document 1 ClientTraffic.Traffic[]): a
// host that enables them has each transaction counted once more per statistics directory of its
// URL, in a counter row of its own named `<host>\0<directory>` (the primary keeps those rows out
// of the node's sums). Only such hosts pay for it: a lookup of the directory's row per level.
import { DIRECTORY_SEPARATOR } from '../../record/counter-layout.js';
import type { Counters } from './counters.js';
import type { Counted } from './counters.js';
import type { DirectoryStats } from './shapes.js';


export function directoryStatsOf(c: { enable: boolean; depth: number; accum: boolean; maxDirectories: number }): DirectoryStats | undefined {
  return c.enable ? { depth: c.depth, accum: c.accum, max: c.maxDirectories, slots: new Map() } : undefined;
}

function rowOf(d: DirectoryStats, counters: Counters, host: string, dir: string): number {
  const slot = d.slots.get(dir);
  if (slot !== undefined) return slot;
  if (d.slots.size >= d.max) return -1;
  const s = counters.slotOf(`${host}${DIRECTORY_SEPARATOR}${dir}`);
  d.slots.set(dir, s);
  return s;
}

/**
 * Counts an ended transaction in its directories: `/a/`, `/a/b/` ... up to `depth` segments of
 * the path (the last segment is a file name, not a directory); every level with accum, else the
 * deepest only. A path with no directory (`/x.jpg`) counts in `/` only, which is the host's row.
 */
export function countDirectories(d: DirectoryStats, counters: Counters, host: string, tx: Counted): void {
  const url = tx.url;
  const q = url.indexOf('?');
  const end = q < 0 ? url.length : q;
  let level = 0;
  let deepest = -1;
  for (let pos = url.indexOf('/', 1); pos > 0 && pos < end && level < d.depth; pos = url.indexOf('/', pos + 1)) {
    level++;
    deepest = pos;
    if (d.accum) {
      const slot = rowOf(d, counters, host, url.slice(0, pos + 1));
      if (slot > 0) counters.countAt(slot, tx);
    }
  }
  if (!d.accum && deepest > 0) {
    const slot = rowOf(d, counters, host, url.slice(0, deepest + 1));
    if (slot > 0) counters.countAt(slot, tx);
  }
}
