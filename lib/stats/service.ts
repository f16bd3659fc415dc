// The primary's statistics: sums the workers' deltas (StatsAggregator), samples the system once
// a second (SystemSampler), answers the documents (StatisticsSource) and runs the collector
// listener when env.management.cluster.stats.enable.
import os from 'node:os';
import type { StatsDeltasMessage } from '../ipc/messages.js';
import { parseListen } from '../setting/schema/formats.js';
import type { Setting } from '../setting/types.js';
import { StatsAggregator } from './aggregate.js';
import { StatsCollector } from './collector.js';
import type { StatisticsSource } from './documents.js';
import { SystemSampler } from './system.js';
import { Census } from './census.js';
import { processFigures } from './processes.js';
import type { BusFigures } from './realtime-view.js';

export type NodeState = 'Healthy' | 'Inactive' | 'Emergency';

export interface StatsServiceDeps {
  setting(): Setting;
  version: string;
  /** The primary and its live workers, by the role the system log names them with. */
  processes(): Array<{ role: string; pid: number }>;
  /** Absolute cache directories. */
  disks(): string[];
  /** Healthy / Inactive by the license. */
  licenseState(): 'Healthy' | 'Inactive';
  /** The license's Status (document 1 /get/license: Available, Expired, Invalid, None). */
  licenseStatus(): string;
  /** True while a worker slot keeps dying at start (a crash loop). */
  crashLooping(): boolean;
  /** Management requests the ACL let through and refused since the start. */
  managementAccess(): { Allow: number; Deny: number };
  /** The cache index file (absolute). */
  indexPath(): string;
  /** The Redis invalidation bus's figures, undefined when it is off. */
  bus?(): BusFigures | undefined;
}

export class StatsService {
  readonly stats = new StatsAggregator();
  private readonly system: SystemSampler;
  private timer: NodeJS.Timeout | undefined;
  private collector: StatsCollector | undefined;
  private readonly census: Census;
  readonly source: StatisticsSource;
  /** Run after every second is closed and the system sampled (the graph history). */
  private readonly perSecond: Array<() => void> = [];

  constructor(private readonly deps: StatsServiceDeps) {
    this.system = new SystemSampler(() => deps.processes().map((p) => p.pid), deps.disks);
    this.census = new Census(deps.indexPath);
    this.source = {
      stats: this.stats,
      version: deps.version,
      name: os.hostname(),
      state: () => this.state(),
      hosts: () => deps.setting().hosting.filter((h) => h.enable !== false).map((h) => h.name),
      system: () => this.system.get(),
      managementAccess: () => deps.managementAccess(),
      processes: () => processFigures(deps.processes()),
      licenseStatus: () => deps.licenseStatus(),
      bus: () => deps.bus?.(),
      census: (name) => this.census.host(name),
      directoryStats: (name) => {
        const h = deps.setting().hosting.find((x) => x.name === name);
        const d = { ...deps.setting().functions.statistics?.directory, ...h?.functions?.statistics?.directory };
        return d.enable === true ? { depth: d.depth ?? 1, accum: d.accum === true } : undefined;
      },
      metricsGroup: () => {
        const meta = deps.setting().meta;
        return meta.labelGroupToMetrics && meta.group !== '' ? meta.group : undefined;
      },
    };
  }

  /**
   * Emergency: the node cannot serve from its cache or keep its workers up (every cache disk
   * unreachable, or a worker slot in a crash loop); Inactive: the license is not valid.
   */
  state(): NodeState {
    const disks = this.system.get().Storage.Disk;
    const seen = this.stats.nodeGauges().disks;
    const usable = (i: number): boolean => disks[i]!.Status === 'Normal' && !(seen[i] ?? []).includes('Invalid');
    if (this.deps.crashLooping() || (disks.length > 0 && !disks.some((_d, i) => usable(i)))) return 'Emergency';
    return this.deps.licenseState();
  }

  onDeltas(m: StatsDeltasMessage, from: number): void {
    this.stats.onDeltas(m, from);
  }

  workerGone(from: number): void {
    this.stats.workerGone(from);
  }

  /** Starts the 1-second clock. */
  start(): void {
    this.timer = setInterval(() => {
      this.stats.tick();
      this.system.sample();
      for (const f of this.perSecond) f();
    }, 1000).unref();
    this.census.start();
  }

  /** The collector, when enabled; rejects when it cannot listen. */
  async startCollector(): Promise<void> {
    const cfg = this.deps.setting().env.management.cluster.stats;
    if (!cfg.enable) return;
    const listen = parseListen(cfg.listen);
    if (listen === null || listen === undefined) throw new Error(`env.management.cluster.stats.listen: cannot listen on "${cfg.listen}"`);
    this.collector = new StatsCollector(this.source);
    try {
      await this.collector.start(listen.host, listen.port);
    } catch (err) {
      throw new Error(`env.management.cluster.stats.listen: cannot listen on ${cfg.listen}: ${(err as Error).message}`);
    }
  }

  /** Calls `f` once a second, after the second's values are closed. */
  onSecond(f: () => void): void {
    this.perSecond.push(f);
  }

  get collectorPort(): number | undefined {
    return this.collector?.port;
  }

  /** Keeps per-host figures only for the hosts served after a setting change. */
  settingApplied(setting: Setting): void {
    this.stats.retain(setting.hosting.map((h) => h.name));
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.system.close();
    await this.census.close();
    await this.collector?.close();
  }
}
