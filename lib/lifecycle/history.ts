// The setting history: one row per stored setting in SQLite (WAL) and its package file under
// packages/. Order of every change, so that a crash at any moment leaves a consistent history:
// adding writes the package file first (atomically) and then the row; pruning deletes rows
// first and then files. A crash can therefore leave only package files without a row, which
// removeOrphans() deletes at start.
import fs from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { removeTempFiles, writeFileAtomic } from '../files/atomic.js';
import { stamp } from '../log/global/error-line.js';
import { md5 as md5Text } from './package.js';

/** A history entry as document 1 shows it. */
export interface HistoryEntry {
  id: number;
  'conf-date': string;
  'conf-time': string;
  type: 'loaded';
  size: number;
  hash: string;
  ver: string;
}

export interface HistoryRow extends HistoryEntry {
  file: string;
  createdMs: number;
  /** contentHash() of the package; null for rows written before it was kept. */
  content: string | null;
}

export interface Retention {
  days: number;
  count: number;
  /** MB */
  size: number;
}

interface DbRow { id: number; conf_date: string; conf_time: string; type: 'loaded'; size: number; hash: string; ver: string; file: string; created_ms: number; content: string | null }

function toRow(r: DbRow): HistoryRow {
  return { id: r.id, 'conf-date': r.conf_date, 'conf-time': r.conf_time, type: r.type, size: r.size, hash: r.hash, ver: r.ver, file: r.file, createdMs: r.created_ms, content: r.content ?? null };
}

export function toEntry(r: HistoryRow): HistoryEntry {
  const { file: _f, createdMs: _c, content: _h, ...entry } = r;
  return entry;
}

/** Whether a setting (its text and content digest) is what `row` already records. */
export function sameContent(row: HistoryRow | undefined, raw: string, content: string): boolean {
  if (row === undefined) return false;
  return row.content === null ? md5OfHash(row.hash) === md5Text(raw) : row.content === content;
}

/** The md5 part of a history hash (`<yyyymmdd>_<hhmmss>_<md5>`). */
export function md5OfHash(hash: string): string {
  return hash.slice(hash.lastIndexOf('_') + 1);
}

export class HistoryStore {
  private readonly db: Database.Database;
  readonly packagesDir: string;

  private constructor(stateDir: string) {
    this.packagesDir = path.join(stateDir, 'packages');
    this.db = new Database(path.join(stateDir, 'history.sqlite'), { timeout: 5000 });
    this.db.pragma('journal_mode = WAL');
    // FULL: a committed row survives a power loss, not only a process crash.
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS history (
      id INTEGER PRIMARY KEY AUTOINCREMENT, conf_date TEXT NOT NULL, conf_time TEXT NOT NULL,
      type TEXT NOT NULL, size INTEGER NOT NULL, hash TEXT NOT NULL UNIQUE, ver TEXT NOT NULL,
      file TEXT NOT NULL, created_ms INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS fullsync (vhost TEXT PRIMARY KEY, at_ms INTEGER NOT NULL);`);
    // Histories made before the content digest was kept get the column (null in old rows).
    const columns = this.db.prepare('PRAGMA table_info(history)').all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'content')) this.db.exec('ALTER TABLE history ADD COLUMN content TEXT');
  }

  static async open(stateDir: string): Promise<HistoryStore> {
    await fs.mkdir(path.join(stateDir, 'packages'), { recursive: true });
    return new HistoryStore(stateDir);
  }

  /** Oldest first. */
  list(): HistoryRow[] {
    return (this.db.prepare('SELECT * FROM history ORDER BY id').all() as DbRow[]).map(toRow);
  }

  newest(): HistoryRow | undefined {
    const r = this.db.prepare('SELECT * FROM history ORDER BY id DESC LIMIT 1').get() as DbRow | undefined;
    return r === undefined ? undefined : toRow(r);
  }

  byHash(hash: string): HistoryRow | undefined {
    const r = this.db.prepare('SELECT * FROM history WHERE hash = ?').get(hash) as DbRow | undefined;
    return r === undefined ? undefined : toRow(r);
  }

  packagePath(row: HistoryRow): string {
    return path.join(this.packagesDir, row.file);
  }

  /**
   * Stores a package and its row; `md5` is that of the setting.json inside (the hash id keeps
   * it, as document 1 shows), `content` the digest of the whole package.
   */
  async add(pkg: Buffer, md5: string, ver: string, content: string | null = null, when: Date = new Date()): Promise<HistoryRow> {
    const { date, time } = stamp(when);
    const compact = `${date.replace(/-/g, '')}_${time.replace(/:/g, '')}`;
    // Compact ISO 8601 with milliseconds; a suffix keeps two packages of one millisecond apart.
    const iso = when.toISOString().replace(/[-:]/g, '');
    let file = `setting_${iso}.tgz`;
    let hash = `${compact}_${md5}`;
    for (let n = 1; this.byHash(hash) !== undefined || (await fileExists(path.join(this.packagesDir, file))); n++) {
      file = `setting_${iso}-${n}.tgz`;
      // The hash id must stay unique too: the time part moves on by whole seconds.
      const later = stamp(new Date(when.getTime() + n * 1000));
      hash = `${later.date.replace(/-/g, '')}_${later.time.replace(/:/g, '')}_${md5}`;
    }
    await writeFileAtomic(path.join(this.packagesDir, file), pkg);
    const info = this.db.prepare(
      'INSERT INTO history (conf_date, conf_time, type, size, hash, ver, file, created_ms, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(date, time, 'loaded', pkg.length, hash, ver, file, when.getTime(), content);
    return { id: Number(info.lastInsertRowid), 'conf-date': date, 'conf-time': time, type: 'loaded', size: pkg.length, hash, ver, file, createdMs: when.getTime(), content };
  }

  /**
   * Deletes the oldest entries beyond any retention limit (days, count, size in MB; 0 days or
   * size = no limit of that kind). The newest entry, the running setting, is always kept.
   */
  async prune(r: Retention, now = Date.now()): Promise<HistoryRow[]> {
    const rows = this.list().reverse();
    let total = 0;
    const doomed: HistoryRow[] = [];
    rows.forEach((row, i) => {
      total += row.size;
      if (i === 0) return;
      const tooMany = r.count > 0 && i >= r.count;
      const tooOld = r.days > 0 && row.createdMs < now - r.days * 86_400_000;
      const tooBig = r.size > 0 && total > r.size * 1024 * 1024;
      if (tooMany || tooOld || tooBig || doomed.length > 0) doomed.push(row);
    });
    if (doomed.length === 0) return [];
    const del = this.db.prepare('DELETE FROM history WHERE id = ?');
    this.db.transaction(() => { for (const d of doomed) del.run(d.id); })();
    await Promise.all(doomed.map((d) => fs.rm(this.packagePath(d), { force: true })));
    return doomed;
  }

  /** Deletes package files no row names (left by a crash between file and row) and temp files. */
  async removeOrphans(): Promise<string[]> {
    await removeTempFiles(this.packagesDir);
    const named = new Set(this.list().map((r) => r.file));
    const names = (await fs.readdir(this.packagesDir)).filter((n) => n.endsWith('.tgz') && !named.has(n));
    await Promise.all(names.map((n) => fs.rm(path.join(this.packagesDir, n), { force: true })));
    return names;
  }

  lastFullsync(vhost: string): number | undefined {
    const r = this.db.prepare('SELECT at_ms FROM fullsync WHERE vhost = ?').get(vhost) as { at_ms: number } | undefined;
    return r?.at_ms;
  }

  setFullsync(vhost: string, atMs: number): void {
    this.db.prepare('INSERT INTO fullsync (vhost, at_ms) VALUES (?, ?) ON CONFLICT(vhost) DO UPDATE SET at_ms = excluded.at_ms').run(vhost, atMs);
  }

  close(): void {
    this.db.close();
  }
}

async function fileExists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}
