// The round-robin store of the graph history (SQLite, WAL): for each scope ('' the node, '*'
// the sum of the hosts, else a host name) and archive, `rows` slots reused in turn (slot =
// step number modulo rows), so the file never grows past scopes x 2,384 rows. A row holds the
// step's start and a scope's accumulator row (lib/graph/resources.ts Layout): numerator and
// denominator of every line, then one Peak per resource. Rows are merged, never overwritten
// while the step lasts, so a step written at shutdown goes on after a restart. Written once per
// 5-minute step by the primary; read by one graph at a time.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { GLOBAL_LAYOUT, VHOST_LAYOUT, type Layout } from './resources.js';
import { ARCHIVES, type Archive } from './types.js';

export const NODE_SCOPE = '';
export const ALL_HOSTS_SCOPE = '*';

export function layoutFor(scope: string): Layout {
  return scope === NODE_SCOPE ? GLOBAL_LAYOUT : VHOST_LAYOUT;
}

/** The Main value of each resource in a row (NaN where no second was measured). */
function mains(layout: Layout, data: Float64Array): Float64Array {
  const out = new Float64Array(layout.resources.length);
  layout.resources.forEach((r, i) => {
    const at = 2 * layout.firstLine.get(r.name)!;
    const den = data[at + 1]!;
    out[i] = den > 0 ? data[at]! / den : NaN;
  });
  return out;
}

const toBlob = (a: Float64Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const fromBlob = (b: Buffer): Float64Array => {
  const copy = new Float64Array(b.byteLength / 8);
  new Uint8Array(copy.buffer).set(b);
  return copy;
};

export class RrdStore {
  private readonly db: Database.Database;
  private readonly getRow: Database.Statement<[string, number, number], { t: number; data: Buffer }>;
  private readonly putRow: Database.Statement<[string, number, number, number, Buffer]>;
  private readonly range: Database.Statement<[string, number, number, number], { t: number; data: Buffer }>;

  /** Opens (or creates) the file; a file SQLite cannot read is set aside and a new one begun. */
  static open(file: string, onReset: (why: string) => void): RrdStore {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      return new RrdStore(new Database(file, { timeout: 5000 }), onReset);
    } catch (err) {
      const aside = `${file}.unreadable-${Date.now()}`;
      fs.renameSync(file, aside);
      onReset(`graph history ${file} could not be read (${(err as Error).message}); moved to ${aside}, starting empty`);
      return new RrdStore(new Database(file, { timeout: 5000 }), onReset);
    }
  }

  private constructor(db: Database.Database, onReset: (why: string) => void) {
    this.db = db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS rrd (scope TEXT NOT NULL, archive INTEGER NOT NULL, slot INTEGER NOT NULL,
        t INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (scope, archive, slot)) WITHOUT ROWID;`);
    // Rows written under another resource table would be read at the wrong places.
    for (const [key, layout, where] of [['global', GLOBAL_LAYOUT, 'scope = \'\''], ['vhost', VHOST_LAYOUT, 'scope <> \'\'']] as const) {
      const was = db.prepare<[string], { v: string }>('SELECT v FROM meta WHERE k = ?').get(key)?.v;
      if (was === layout.signature) continue;
      const dropped = db.prepare(`DELETE FROM rrd WHERE ${where}`).run().changes;
      db.prepare('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)').run(key, layout.signature);
      if (was !== undefined && dropped > 0) onReset(`graph history of the ${key} resources kept by another version: ${dropped} rows dropped`);
    }
    this.getRow = db.prepare('SELECT t, data FROM rrd WHERE scope = ? AND archive = ? AND slot = ?');
    this.putRow = db.prepare('INSERT OR REPLACE INTO rrd (scope, archive, slot, t, data) VALUES (?, ?, ?, ?, ?)');
    this.range = db.prepare('SELECT t, data FROM rrd WHERE scope = ? AND archive = ? AND t >= ? AND t < ?');
  }

  private slot(a: Archive, t: number): number {
    return Math.floor(t / a.step) % a.rows;
  }

  /** The stored row of the step starting at `t`, or undefined (none, or an older round's). */
  private row(scope: string, a: Archive, t: number): Float64Array | undefined {
    const r = this.getRow.get(scope, a.index, this.slot(a, t));
    return r !== undefined && r.t === t ? fromBlob(r.data) : undefined;
  }

  /** Adds an accumulator's numerators and denominators into the step of archive `a` holding `t`. */
  private merge(scope: string, a: Archive, t: number, add: Float64Array, lines: number): Float64Array {
    const start = Math.floor(t / a.step) * a.step;
    let data = this.row(scope, a, start);
    if (data === undefined) {
      data = new Float64Array(add.length).fill(NaN);
      data.fill(0, 0, 2 * lines);
    }
    for (let i = 0; i < 2 * lines; i++) data[i] += add[i]!;
    this.putRow.run(scope, a.index, this.slot(a, start), start, toBlob(data));
    return data;
  }

  /** Raises the Peaks of archive `a`'s step holding `t` to the given Main values. */
  private foldPeaks(scope: string, layout: Layout, a: Archive, t: number, values: Float64Array): void {
    const start = Math.floor(t / a.step) * a.step;
    const data = this.row(scope, a, start);
    if (data === undefined) return;
    const at = 2 * layout.lineCount;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (Number.isNaN(v)) continue;
      const p = data[at + i]!;
      data[at + i] = Number.isNaN(p) ? v : Math.max(p, v);
    }
    this.putRow.run(scope, a.index, this.slot(a, start), start, toBlob(data));
  }

  /**
   * Writes the 5-minute step starting at `t` of every scope: into its archive-0 row and the
   * coarser rows holding it. `closed` when the step is over (not a flush at shutdown): a finer
   * step that ends with it then gives its Main value to the next archive's Peak.
   */
  commit(t: number, scopes: Map<string, Float64Array>, closed: boolean): void {
    const step0 = ARCHIVES[0]!.step;
    this.db.transaction(() => {
      for (const [scope, acc] of scopes) {
        const layout = layoutFor(scope);
        const step = this.merge(scope, ARCHIVES[0]!, t, acc, layout.lineCount);
        for (const a of ARCHIVES.slice(1)) this.merge(scope, a, t, acc, layout.lineCount);
        this.foldPeaks(scope, layout, ARCHIVES[1]!, t, mains(layout, step));
        if (!closed) continue;
        for (let i = 2; i < ARCHIVES.length; i++) {
          const f = ARCHIVES[i - 1]!;
          if ((t + step0) % f.step !== 0) break;
          const fineStart = t + step0 - f.step;
          const row = this.row(scope, f, fineStart);
          if (row === undefined) break;
          this.foldPeaks(scope, layout, ARCHIVES[i]!, fineStart, mains(layout, row));
        }
      }
    })();
  }

  /** The stored rows of archive `a` for steps starting in [from, to), by step start. */
  rows(scope: string, a: Archive, from: number, to: number): Map<number, Float64Array> {
    const out = new Map<number, Float64Array>();
    for (const r of this.range.all(scope, a.index, from, to)) out.set(r.t, fromBlob(r.data));
    return out;
  }

  /** Forgets the history of the scopes not in `keep` (hosts no longer served). */
  retain(keep: Set<string>): number {
    let n = 0;
    const del = this.db.prepare('DELETE FROM rrd WHERE scope = ?');
    for (const { scope } of this.db.prepare<[], { scope: string }>('SELECT DISTINCT scope FROM rrd').all()) {
      if (!keep.has(scope)) n += del.run(scope).changes;
    }
    return n;
  }

  close(): void {
    this.db.close();
  }
}
