// The global logs of document 3 (env.log) in the primary: info, watch, error and the deprecated
// system and originError, each a RollingFile (lib/log/roll.ts, the roller of the access log) in
// `dir` (null: meta.dir) under env.home with its own rolling, retention and compression. A log
// that does not roll is `<name>.log`; one that rolls `<name>_<yyyymmdd>_<hhmm>[ss].log`.
//
// Line forms: info `date time message fields-json`; watch `date time event vhost body-json`;
// error `date time error vhost url x-ctx-id message` (the code table is ./error-codes.ts).
//
// Nothing here can stop serving or a deployment: a file that cannot be written drops its lines
// and the failure is reported once a minute per file in the error log, or on stderr when the
// error log is the one failing.
import path from 'node:path';
import { resolvePath } from '../../setting/resolve.js';
import type { Setting } from '../../setting/types.js';
import type { BackupSource } from '../repository/scheduler.js';
import { RollingFile } from '../roll.js';
import { ERRORS, type ErrorEvent } from './error-codes.js';
import { ErrorLines, stamp } from './error-line.js';
import type { WatchEvent } from './watch-events.js';

export type GlobalLogKind = 'info' | 'watch' | 'error' | 'system' | 'originError';

const REPORT_EVERY_MS = 60_000;

export interface GlobalLogOptions {
  /** The clock (ms since the epoch) of line stamps and rolling; injected by tests. */
  now?: () => number;
  /** Where a failure of the error log itself goes. */
  stderr?: (line: string) => void;
}

export class GlobalLogs {
  private readonly files = new Map<GlobalLogKind, RollingFile>();
  private readonly lastReport = new Map<string, number>();
  private readonly now: () => number;
  private readonly stderr: (line: string) => void;
  private errorLines: ErrorLines | undefined;
  private hostEvents = true;
  /** When the error log last failed to write (reports then go to stderr for a minute). */
  private errorLogFailedAt = -Infinity;

  /** The log places are env members: fixed until the next start. */
  constructor(setting: Setting, opts: GlobalLogOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.stderr = opts.stderr ?? ((l) => process.stderr.write(l));
    const log = setting.env.log;
    for (const kind of ['info', 'watch', 'error', 'system', 'originError'] as const) {
      const l = log[kind];
      if (!l.enable) continue;
      const dir = resolvePath(setting, ('dir' in l ? l.dir : null) ?? log.meta.dir);
      const file = new RollingFile({
        dir, base: kind, retention: l.retention, compression: l.compression,
        ...(l.rolling.time === undefined ? {} : { timeMinutes: l.rolling.time }),
        ...(l.rolling.size === undefined ? {} : { sizeBytes: l.rolling.size * 1024 * 1024 }),
        ...(opts.now === undefined ? {} : { now: opts.now }),
        onError: (err) => this.failed(path.join(dir, `${kind}.log`), err, kind === 'error'),
      });
      this.files.set(kind, file);
    }
    if (log.error.enable) this.errorLines = new ErrorLines(log.error);
    this.hostEvents = log.watch.events.setting.enable;
  }

  /**
   * The logs of `setting` backed up to repositories (lib/log/repository/scheduler.ts): info, watch
   * and error, as their `backup` names them. They belong to no host: `{domain}` is `global`.
   */
  backupSources(setting: Setting): BackupSource[] {
    const out: BackupSource[] = [];
    for (const kind of ['info', 'watch', 'error'] as const) {
      const file = this.files.get(kind);
      const repositories = setting.env.log[kind].backup;
      if (file === undefined || repositories.length === 0) continue;
      out.push({ file, dir: file.opts.dir, base: kind, logtype: kind, domain: 'global', repositories: [...repositories] });
    }
    return out;
  }

  has(kind: GlobalLogKind): boolean {
    return this.files.has(kind);
  }

  /** True when virtual-host events (0002xxxx) are recorded; start/stop always are. */
  get hostEventsEnabled(): boolean {
    return this.hostEvents && this.files.has('watch');
  }

  /** Resolves once the line is in the file (or dropped); never rejects. */
  info(message: string, fields: Record<string, unknown> = {}): Promise<void> {
    const f = this.files.get('info');
    if (f === undefined) return Promise.resolve();
    const { date, time } = stamp(new Date(this.now()));
    f.write(`${date} ${time} ${message.replace(/\s+/g, ' ')} ${JSON.stringify(fields)}\n`);
    return f.flush();
  }

  /** Resolves once the line is in the file (or dropped); never rejects. */
  watch(event: WatchEvent, vhost: string | undefined, body: unknown): Promise<void> {
    const f = this.files.get('watch');
    if (f === undefined || (event.startsWith('0002') && !this.hostEvents)) return Promise.resolve();
    const { date, time } = stamp(new Date(this.now()));
    f.write(`${date} ${time} ${event} ${vhost ?? '-'} ${JSON.stringify(body ?? {})}\n`);
    return f.flush();
  }

  /** One error event (at: when it happened, default now), kept or not by env.log.error.filter. */
  error(e: ErrorEvent, at = this.now()): void {
    const line = this.errorLines?.line(e, at);
    if (line !== undefined) this.files.get('error')?.write(line);
  }

  /** Lines formatted elsewhere (a worker's error and originError lines, the system record). */
  lines(kind: 'error' | 'system' | 'originError', text: string): void {
    this.files.get(kind)?.write(text);
  }

  /**
   * A log file (global or per-host) cannot be written: reported once a minute per file, in the
   * error log, or on stderr when the error log is the one failing.
   */
  failed(file: string, err: Error, errorLogItself = false): void {
    const now = this.now();
    if (errorLogItself) this.errorLogFailedAt = now;
    if (now - (this.lastReport.get(file) ?? -Infinity) < REPORT_EVERY_MS) return;
    this.lastReport.set(file, now);
    // While the error log fails, the other reports have nowhere else to go either.
    if (!this.files.has('error') || now - this.errorLogFailedAt < REPORT_EVERY_MS) {
      const { date, time } = stamp(new Date(now));
      this.stderr(`${date} ${time} 4001 ${ERRORS['4001'].text}: ${file}: ${err.message} (reported once a minute)\n`);
      return;
    }
    this.error({ code: '4001', detail: `${file}: ${err.message} (reported once a minute)` });
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
  }
}
