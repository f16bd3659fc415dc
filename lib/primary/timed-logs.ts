// The logs the primary writes on a clock rather than on an event: the metrics log (its cron
// schedule), the deprecated system log (the System figures once a minute), each host's
// monitoring log (its 5-minute statistics record at every multiple of 5 minutes), and the log
// listener of env.log.meta.port. Every record is formatted here and handed to the global logs or
// the per-host hub, which write off the event loop.
import path from 'node:path';
import { parseCron } from '../log/cron.js';
import type { GlobalLogs } from '../log/global/global-logs.js';
import { stamp } from '../log/global/error-line.js';
import { MetricsLog } from '../log/global/metrics-log.js';
import { UdpLogListener } from '../log/global/udp-listener.js';
import type { LogHub } from '../log/hub.js';
import { resolvePath } from '../setting/resolve.js';
import type { Setting } from '../setting/types.js';
import { metricsReply, type StatisticsSource } from '../stats/documents.js';
import { hostDocument } from '../stats/realtime-view.js';
import { statisticsXml } from '../stats/xml.js';

const SYSTEM_EVERY_MS = 60_000;
const MONITORING_EVERY_MS = 5 * 60_000;

export interface TimedLogDeps {
  /** The running setting (hosts and their monitoring logs follow reloads; env does not). */
  setting(): Setting;
  baseDir: string;
  logs: GlobalLogs;
  hub: LogHub;
  stats: StatisticsSource;
  /** Period of the monitoring records (5 minutes; tests use a shorter one). */
  monitoringEveryMs?: number;
}

/** One host's record of the 5-minute document: a JSON line, or an XML element on one line. */
export function monitoringRecord(vhost: Record<string, unknown>, form: 'json' | 'xml', at: number): string {
  const { date, time } = stamp(new Date(at));
  const record = { Date: date, Time: time, ...vhost };
  if (form === 'json') return `${JSON.stringify(record)}\n`;
  return `${statisticsXml({ VirtualHost: record }).replace(/^<\?xml[^>]*\?>\s*/, '').replace(/>\s+</g, '><').trim()}\n`;
}

export class TimedLogs {
  private metrics: MetricsLog | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly udp: UdpLogListener;

  constructor(private readonly d: TimedLogDeps) {
    this.udp = new UdpLogListener({ error: (e) => d.logs.error(e), info: (m, f) => void d.logs.info(m, f) });
  }

  /** The metrics log, once started with env.log.metrics.enable (its snapshots can be backed up). */
  get metricsLog(): MetricsLog | undefined {
    return this.metrics;
  }

  /** Resolves to the listener's port (undefined when it could not bind: reported, not fatal). */
  async start(): Promise<number | undefined> {
    const setting = this.d.setting();
    const log = setting.env.log;
    const m = log.metrics;
    if (m.enable) {
      const dir = resolvePath(setting, m.dir ?? log.meta.dir);
      this.metrics = new MetricsLog({
        dir, cron: parseCron(m.schedule),
        timeMinutes: m.rolling.time, sizeBytes: m.rolling.size === undefined ? undefined : m.rolling.size * 1024 * 1024,
        retention: m.retention, compression: m.compression,
        text: () => metricsReply(this.d.stats).body,
        onError: (err) => this.d.logs.failed(path.join(dir, 'metrics_*'), err),
      });
      this.metrics.start();
    }
    if (this.d.logs.has('system')) {
      // A first record at start (the figures of the first second), then one a minute.
      this.systemRecord();
      this.every(SYSTEM_EVERY_MS, () => this.systemRecord());
    }
    this.every(this.d.monitoringEveryMs ?? MONITORING_EVERY_MS, () => this.monitoringRecords());
    return this.udp.start(log.meta.port);
  }

  /** Runs `fn` at each multiple of `ms` on the clock. */
  private every(ms: number, fn: () => void): void {
    const arm = (): void => {
      const t = setTimeout(() => { fn(); this.timers.splice(this.timers.indexOf(t), 1); arm(); }, ms - (Date.now() % ms));
      t.unref();
      this.timers.push(t);
    };
    arm();
  }

  private systemRecord(): void {
    const { date, time } = stamp();
    this.d.logs.lines('system', `${date} ${time} ${this.d.stats.state()} ${JSON.stringify(this.d.stats.system())}\n`);
  }

  private monitoringRecords(): void {
    const hosts = this.d.hub.monitored(this.d.setting(), this.d.baseDir);
    if (hosts.length === 0) return;
    const at = Date.now();
    const doc = hostDocument(this.d.stats, 'min5') as { Host: { VirtualHost: Array<Record<string, unknown>> } };
    for (const { host, form } of hosts) {
      const vh = doc.Host.VirtualHost.find((v) => v.Name === host);
      if (vh !== undefined) this.d.hub.write({ kind: 'monitoring', host, text: monitoringRecord(vh, form, at) });
    }
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.udp.close();
    await this.metrics?.close();
  }
}
