// The backup scheduler (document 3 "Log backup repositories"): each repository wakes on its own
// `rolling` cron (minute hour, UTC) and sends every log that names it in `backup` the unit of
// lines finished since its last upload: the log's rolled files it has not received yet, as one
// object at the expanded `path`. It runs in the primary beside the log files' writer, on async
// I/O and streams only, so an upload never holds up serving.
//
// Nothing is lost: a file counts as shipped only once its upload succeeded (./shipped.ts), a
// failed attempt is retried with a doubling back-off (5 s to 5 min) until one succeeds, and
// retention keeps every rolled file a repository has not received (RollingFile.hold), beyond
// `retention` if need be. Each attempt, good or failed, is watch event 00030004.
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Setting } from '../../setting/types.js';
import { nextFire } from '../cron.js';
import { expandPath, nodeIp } from './path-template.js';
import { repositoryOf, type Repository, type SecretKeySource } from './repository.js';
import { ShippedSet } from './shipped.js';

/**
 * The finished files of a log: a RollingFile (lib/log/roll.ts) or the metrics snapshots
 * (lib/log/global/metrics-log.ts). Names are relative to the source's `dir`.
 */
export interface BackupFiles {
  /**
   * A time-rolled log finishes its current file if its period has ended. The repository's cron
   * fires on the minute, before the log's own roll timer (which runs just after it): without
   * this, the file of the minute that just ended would wait for the repository's next time.
   */
  tick?(): Promise<void>;
  /** Finished files, oldest first. */
  rolled(): Promise<string[]>;
  /** Applies retention again (after an upload released files). */
  retain(): Promise<void>;
  /** True for a name retention must keep (not shipped yet); set by the scheduler. */
  hold: ((name: string) => boolean) | undefined;
}

/** A log whose finished files go to repositories (from the log writers, lib/primary/node-logs.ts). */
export interface BackupSource {
  file: BackupFiles;
  dir: string;
  base: string;
  logtype: string;
  /** `{domain}`: the host, or `unify` for a file all hosts share. */
  domain: string;
  repositories: string[];
}

/** Watch events of document 3 the scheduler writes. */
const BACKUP_EVENTS = { started: '00030001', removed: '00030002', changed: '00030003', tried: '00030004' } as const;
type BackupEvent = (typeof BACKUP_EVENTS)[keyof typeof BACKUP_EVENTS];

export interface AttemptBody { name: string; date: string; time: string; path: string; bytes: number; error: string | null }

export interface SchedulerOptions {
  watch: (event: BackupEvent, body: unknown) => void;
  /** The clock; tests inject one and call `fire` themselves. */
  now?: () => number;
  /** First retry delay (ms); doubles up to 5 minutes. */
  retryMs?: number;
  /** The key `enc:` credentials of the repositories decrypt under (the node's license). */
  secretKey?: SecretKeySource;
}

const MAX_RETRY_MS = 5 * 60_000;

/** One log to one repository: at most one attempt at a time. */
interface Lane {
  key: string;
  repo: Repository;
  source: BackupSource;
  shipped: ShippedSet;
  busy: boolean;
  failures: number;
  retry: NodeJS.Timeout | undefined;
}

export class BackupScheduler {
  private readonly now: () => number;
  /** Repositories by name, with the setting each was built from. */
  private repos = new Map<string, { key: string; repo: Repository }>();
  private lanes = new Map<string, Lane>();
  private timers = new Map<string, NodeJS.Timeout>();
  private running = false;
  private closed = false;
  private group = '';
  private readonly hostname = os.hostname();
  private readonly ip = nodeIp();
  private readonly inFlight = new Set<Promise<void>>();
  /** Log files whose retention this scheduler holds back. */
  private held = new Set<BackupFiles>();

  constructor(private readonly opts: SchedulerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Takes the repositories of `setting` and the logs that name them; lanes that stay keep their state. */
  configure(setting: Setting, sources: BackupSource[]): void {
    if (this.closed) return;
    this.group = setting.meta.group;
    const repos = new Map<string, { key: string; repo: Repository }>();
    for (const r of setting.env.log.repository.list) {
      const key = JSON.stringify(r);
      const old = this.repos.get(r.name);
      repos.set(r.name, old !== undefined && old.key === key ? old : { key, repo: repositoryOf(r, setting, this.opts.secretKey) });
    }
    const lanes = new Map<string, Lane>();
    for (const s of sources) {
      for (const name of new Set(s.repositories)) {
        const repo = repos.get(name)?.repo;
        if (repo === undefined) continue;
        const key = `${name}\0${s.dir}\0${s.base}`;
        const old = this.lanes.get(key);
        const lane: Lane = old !== undefined && old.repo === repo
          ? Object.assign(old, { source: s })
          // The record of what `name` received stays with the name, even when its endpoint changes.
          : { key, repo, source: s, shipped: old?.shipped ?? new ShippedSet(s.dir, s.base, name), busy: false, failures: 0, retry: undefined };
        lanes.set(key, lane);
      }
    }
    for (const [key, l] of this.lanes) if (lanes.get(key) !== l && l.retry !== undefined) clearTimeout(l.retry);
    // A lane replaced: its repository's setting changed, or a log names another one.
    const changed = lanes.size !== this.lanes.size || [...lanes].some(([k, l]) => this.lanes.get(k) !== l);
    this.repos = repos;
    this.lanes = lanes;
    this.holdFiles(sources);
    for (const l of lanes.values()) void l.shipped.load().catch(() => undefined);
    this.arm();
    const body = setting.env.log;
    if (lanes.size > 0 && !this.running) { this.running = true; this.opts.watch(BACKUP_EVENTS.started, body); }
    else if (lanes.size === 0 && this.running) { this.running = false; this.opts.watch(BACKUP_EVENTS.removed, {}); }
    else if (lanes.size > 0 && changed) this.opts.watch(BACKUP_EVENTS.changed, body);
  }

  /** Runs the upload of every lane of `repository` now, as its cron would at `at`. */
  fire(repository: string, at = this.now()): Promise<void> {
    const runs = [...this.lanes.values()].filter((l) => l.repo.name === repository && !l.busy && l.retry === undefined).map((l) => this.attempt(l, at));
    return Promise.all(runs).then(() => undefined);
  }

  /** Resolves when the uploads under way have ended (retries not counted). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    for (const l of this.lanes.values()) if (l.retry !== undefined) clearTimeout(l.retry);
    // Uploads under way are not waited for: one cut short was not recorded, and goes next time.
    if (this.running) this.opts.watch(BACKUP_EVENTS.removed, {});
    this.running = false;
  }

  /** Retention spares what a repository has not received (and everything until the record is read). */
  private holdFiles(sources: BackupSource[]): void {
    const held = new Set<BackupFiles>();
    for (const s of sources) {
      const lanes = [...this.lanes.values()].filter((l) => l.source === s);
      s.file.hold = lanes.length === 0 ? undefined : (name) => lanes.some((l) => !l.shipped.has(name));
      if (lanes.length > 0) held.add(s.file);
    }
    // A log no longer backed up goes back to plain retention.
    for (const f of this.held) if (!held.has(f)) f.hold = undefined;
    this.held = held;
  }

  /** One timer per repository, at its next cron time (real clock only). */
  private arm(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.opts.now !== undefined) return;
    const names = new Set([...this.lanes.values()].map((l) => l.repo.name));
    for (const name of names) this.armOne(name);
  }

  private armOne(name: string): void {
    const repo = this.repos.get(name)?.repo;
    if (repo === undefined || this.closed) return;
    const now = Date.now();
    const at = nextFire(repo.cron, now);
    // Timers can fire a little early: `at` is the cron minute the unit is stamped with.
    const t = setTimeout(() => { this.timers.delete(name); void this.fire(name, at); this.armOne(name); }, at - now + 5);
    t.unref();
    this.timers.set(name, t);
  }

  private attempt(l: Lane, at: number): Promise<void> {
    l.busy = true;
    const p = this.run(l, at).finally(() => { l.busy = false; this.inFlight.delete(p); });
    this.inFlight.add(p);
    return p;
  }

  private async run(l: Lane, at: number): Promise<void> {
    const s = l.source;
    let key = '';
    let files: string[] = [];
    try {
      await l.shipped.load();
      await s.file.tick?.();
      const rolled = await s.file.rolled();
      files = rolled.filter((f) => !l.shipped.has(f));
      if (files.length === 0) { l.failures = 0; return; }
      key = expandPath(l.repo.path, { group: this.group, domain: s.domain, hostname: this.hostname, ip: this.ip, logtype: s.logtype, at });
      const spool = path.join(s.dir, '.backup', `${s.base}.${encodeURIComponent(l.repo.name)}.unit`);
      let bytes: number;
      try {
        bytes = await l.repo.send({ dir: s.dir, files, logtype: s.logtype, domain: s.domain, spool }, key);
      } finally {
        await fsp.rm(spool, { force: true });
      }
      await l.shipped.record(files, rolled);
      l.failures = 0;
      this.tried(l, key, bytes, null);
      await s.file.retain();
    } catch (err) {
      l.failures++;
      this.tried(l, key, 0, (err as Error).message);
      this.scheduleRetry(l, at);
    }
  }

  private tried(l: Lane, key: string, bytes: number, error: string | null): void {
    const iso = new Date(this.now()).toISOString();
    const body: AttemptBody = { name: l.repo.name, date: iso.slice(0, 10), time: iso.slice(11, 19), path: key, bytes, error };
    this.opts.watch(BACKUP_EVENTS.tried, body);
  }

  private scheduleRetry(l: Lane, at: number): void {
    if (this.closed || this.lanes.get(l.key) !== l) return;
    const delay = Math.min((this.opts.retryMs ?? 5000) * 2 ** (l.failures - 1), MAX_RETRY_MS);
    l.retry = setTimeout(() => { l.retry = undefined; if (this.lanes.get(l.key) === l) void this.attempt(l, at); }, delay);
    l.retry.unref();
  }
}

