// Every log file of the node, in the primary: the global logs (env.log), the per-host hub that
// writes the workers' batches, and the timed records and log listener. Opened once the setting
// is loaded; the process-wide entry points (writeWatchEvent, reportError) write through them.
import type { GlobalLogs } from '../log/global/global-logs.js';
import { setErrorSink } from '../log/global/report.js';
import { setWatchSink } from '../log/global/watch-events.js';
import { LogHub } from '../log/hub.js';
import type { LogBatch } from '../log/ship.js';
import type { DirectReport, LogFiles } from '../log/direct.js';
import type { BackupSource } from '../log/repository/scheduler.js';
import type { Setting } from '../setting/types.js';
import type { StatisticsSource } from '../stats/documents.js';
import { TimedLogs } from './timed-logs.js';

export class NodeLogs {
  private readonly hub: LogHub;
  private timed: TimedLogs | undefined;

  /** `announce`: tells the workers the host log files they append to (lib/primary/log-files.ts). */
  constructor(readonly global: GlobalLogs, private readonly baseDir: string, announce?: (files: LogFiles) => Promise<void>) {
    this.hub = new LogHub((file, err) => global.failed(file, err), undefined, announce);
    setWatchSink((event, vhost, body) => void global.watch(event, vhost, body));
    setErrorSink((e) => global.error(e));
  }

  /** The per-host files of a setting (at start and at each applied setting). */
  configure(setting: Setting): void {
    this.hub.configure(setting, this.baseDir);
  }

  /**
   * The global and per-host files backed up to repositories (lib/log/repository/scheduler.ts);
   * the metrics snapshots once startTimed has run.
   */
  backupSources(setting: Setting): BackupSource[] {
    const out = [...this.global.backupSources(setting), ...this.hub.backupSources()];
    const metrics = this.timed?.metricsLog;
    const repositories = setting.env.log.metrics.backup;
    if (metrics !== undefined && repositories.length > 0) {
      out.push({ file: metrics, dir: metrics.dir, base: 'metrics', logtype: 'metrics', domain: 'global', repositories: [...repositories] });
    }
    return out;
  }

  /** A worker's batch of lines: per-host logs to the hub, its error/originError lines to those logs. */
  write(b: LogBatch): void {
    if (b.kind === 'error' || b.kind === 'originError') this.global.lines(b.kind, b.text.toString());
    else this.hub.write(b);
  }

  /** A worker's direct writer could not append to a file. */
  fromWorker(m: Extract<DirectReport, { type: 'log-file-error' }>): void {
    this.hub.writeFailed(m.file, m.message);
  }

  /** Starts the metrics, system and monitoring records and the listener; resolves to its port. */
  startTimed(setting: () => Setting, stats: StatisticsSource): Promise<number | undefined> {
    this.timed = new TimedLogs({ setting, baseDir: this.baseDir, logs: this.global, hub: this.hub, stats });
    return this.timed.start();
  }

  /** Stops the timed records and frees the listener's port (a restart's new primary binds it). */
  async closeTimed(): Promise<void> {
    await this.timed?.close().catch(() => undefined);
    this.timed = undefined;
  }

  async close(): Promise<void> {
    await this.closeTimed();
    await this.hub.close().catch(() => undefined);
    await this.global.close().catch(() => undefined);
    setWatchSink(undefined);
    setErrorSink(undefined);
  }
}
