// The one writer of the per-host log files (the primary): a RollingFile per file, built from each
// host's `functions.operations.log` (its own functions over the global ones). Workers send
// batches of formatted lines (lib/log/ship.ts). A host's file is `<meta.dir>/<host>/<kind>_...`;
// with `unify` every host of that log and directory shares `<meta.dir>/<kind>_...`. A relative
// `meta.dir` resolves under env.home.
//
// A file that cannot be written (disk full, directory unwritable) never stops serving: its lines
// are dropped and the failure is reported once per minute per file.
import path from 'node:path';
import { resolveHosts, resolvePath } from '../setting/resolve.js';
import type { ResolvedHost, Setting } from '../setting/types.js';
import { headerOf } from './access/forms.js';
import { accessFormOf } from './host-logs.js';
import { ORIGIN_HEADER } from './origin/line.js';
import { DNS_HEADER } from './dns-line.js';
import type { BackupSource } from './repository/scheduler.js';
import { RollingFile, type RollOptions } from './roll.js';
import type { HostLogKind, LogBatch } from './ship.js';
import type { LogFiles } from './direct.js';

const REPORT_EVERY_MS = 60_000;

export type LogErrorReport = (file: string, err: Error) => void;

export class LogHub {
  /** File options (JSON) -> the open file. */
  private files = new Map<string, RollingFile>();
  /** `kind host` -> file key. */
  private routes = new Map<string, string>();
  /** File key -> the hosts writing it and the repositories they back it up to. */
  private backups = new Map<string, { kind: HostLogKind; hosts: Set<string>; repositories: Set<string>; unify: boolean }>();
  private readonly lastReport = new Map<string, number>();

  /**
   * `announce` tells the workers the current file of every route (lib/log/direct.ts) and
   * resolves once they moved to it (or gave up waiting).
   */
  constructor(private readonly report: LogErrorReport, private readonly now?: () => number,
    private readonly announce?: (files: LogFiles) => Promise<void>) {}

  /** Builds the files of a setting; files whose options did not change stay open. */
  configure(setting: Setting, baseDir: string): void {
    const wanted = new Map<string, RollOptions>();
    const routes = new Map<string, string>();
    const backups: typeof this.backups = new Map();
    for (const h of resolveHosts(setting, { baseDir })) {
      if (!h.enable) continue;
      for (const kind of ['access', 'origin', 'dns', 'monitoring'] as const) {
        const o = this.optionsFor(setting, h, kind);
        if (o === undefined) continue;
        const key = JSON.stringify(o);
        wanted.set(key, o);
        routes.set(`${kind} ${h.name}`, key);
        const l = h.functions.operations.log[kind];
        let b = backups.get(key);
        if (b === undefined) backups.set(key, (b = { kind, hosts: new Set(), repositories: new Set(), unify: l.unify }));
        b.hosts.add(h.name);
        for (const r of l.backup) b.repositories.add(r);
      }
    }
    const next = new Map<string, RollingFile>();
    for (const [key, o] of wanted) {
      next.set(key, this.files.get(key) ?? new RollingFile({
        ...o, now: this.now, onError: (e) => this.failed(path.join(o.dir, o.base), e), onSwitch: () => this.switched(),
      }));
    }
    for (const [key, f] of this.files) if (!next.has(key)) void f.close();
    this.files = next;
    this.routes = routes;
    this.backups = backups;
    void this.switched();
  }

  /**
   * The current file of every route the workers append to themselves: open files that do not
   * roll by size (the primary alone keeps those within their size).
   */
  directFiles(): LogFiles {
    const out: LogFiles = {};
    for (const [route, key] of this.routes) {
      const f = this.files.get(key);
      const file = f?.current;
      if (f !== undefined && file !== undefined && f.opts.sizeBytes === undefined) out[route] = file;
    }
    return out;
  }

  /** A worker could not append to `file`. */
  writeFailed(file: string, message: string): void {
    this.failed(file, new Error(message));
  }

  private switched(): Promise<void> {
    return this.announce?.(this.directFiles()) ?? Promise.resolve();
  }

  /** The files backed up to repositories (lib/log/repository/scheduler.ts). */
  backupSources(): BackupSource[] {
    const out: BackupSource[] = [];
    for (const [key, b] of this.backups) {
      const file = this.files.get(key);
      if (file === undefined || b.repositories.size === 0) continue;
      const domain = b.unify ? 'unify' : [...b.hosts][0]!;
      out.push({ file, dir: file.opts.dir, base: file.opts.base, logtype: b.kind, domain, repositories: [...b.repositories] });
    }
    return out;
  }

  write(b: LogBatch): void {
    const key = this.routes.get(`${b.kind} ${b.host}`);
    if (key !== undefined) this.files.get(key)?.write(b.text);
  }

  /** Rolls every time-rolled file whose period ended (tests with their own clock). */
  async tick(): Promise<void> {
    await Promise.all([...this.files.values()].map((f) => f.tick()));
  }

  async flush(): Promise<void> {
    await Promise.all([...this.files.values()].map((f) => f.flush()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.files.values()].map((f) => f.close()));
    this.files.clear();
  }

  private optionsFor(setting: Setting, h: ResolvedHost, kind: HostLogKind): Omit<RollOptions, 'now' | 'onError'> | undefined {
    const log = h.functions.operations.log;
    const l = log[kind];
    if (!l.enable) return undefined;
    const root = resolvePath(setting, log.meta.dir);
    const form = kind === 'access' ? accessFormOf(h).form : kind;
    return {
      dir: l.unify ? root : path.join(root, h.name),
      base: kind,
      ...(l.rolling.time === undefined ? {} : { timeMinutes: l.rolling.time }),
      ...(l.rolling.size === undefined ? {} : { sizeBytes: l.rolling.size * 1024 * 1024 }),
      retention: l.retention,
      compression: l.compression,
      ...fileHeader(kind, form),
    };
  }

  /** Hosts whose monitoring log is on, with its form (the primary writes those records). */
  monitored(setting: Setting, baseDir: string): Array<{ host: string; form: 'json' | 'xml' }> {
    return resolveHosts(setting, { baseDir }).filter((h) => h.enable && h.functions.operations.log.monitoring.enable)
      .map((h) => ({ host: h.name, form: h.functions.operations.log.monitoring.form }));
  }

  private failed(file: string, err: Error): void {
    const now = Date.now();
    if (now - (this.lastReport.get(file) ?? -Infinity) < REPORT_EVERY_MS) return;
    this.lastReport.set(file, now);
    this.report(file, err);
  }
}

/** The first lines of a new file of a log: the W3C header where the form has one. */
function fileHeader(kind: HostLogKind, form: string): { header?: string } {
  if (kind === 'origin') return { header: ORIGIN_HEADER };
  if (kind === 'dns') return { header: DNS_HEADER };
  if (kind === 'monitoring' || form === 'custom') return {};
  return { header: headerOf(form) };
}
