// The primary process (started by the supervisor, lib/supervisor): validates the setting before
// anything starts, forks the RT workers and relays their listening sockets from the supervisor,
// routes their messages (their slots, ring and replacement are worker-slots.ts), delivers each
// setting to them (setting-delivery.ts), reloads on SIGHUP, rolls the workers on SIGUSR2, only
// logs SIGUSR1, drains everything on SIGTERM, and hands the node over to a new primary on a
// restart (service-ops.ts). The services it starts are wired in their own modules (fleet/wiring.ts,
// statistics-wiring.ts, management-routes.ts); this file keeps the order of the start.
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemLog } from '../log/system-log.js';
import { LoadFailure, restoreMissingSetting, SettingLifecycle } from '../lifecycle/index.js';
import { licensePaths, LicenseService } from '../license/service.js';
import { LicenseWatch, logStateChange } from './license-watch.js';
import { loadSettingFile } from '../setting-check/load.js';
import { SettingError } from '../setting/issues.js';
import { resolvePath } from '../setting/resolve.js';
import { checkStartCertificates } from './start-certificates.js';
import type { Setting } from '../setting/types.js';
import { ManagementApi } from '../manager/index.js';
import { SIBLING_SECRET_ENV, type PrimaryMessage, type WorkerMessage } from '../ipc/messages.js';
import { managementApiOf, PRODUCT_VERSION } from './management-routes.js';
import { PrectrlFeed } from './prectrl-feed.js';
import { RpcClient } from '../ipc/rpc.js';
import { WorkerBridge } from './rt-bridge.js';
import { SessionBlocks } from './session-blocks.js';
import { TicketKeys } from './ticket-keys.js';
import type { StatsService } from '../stats/service.js';
import type { GraphService } from '../graph/service.js';
import { statisticsOf } from './statistics-wiring.js';
import { GlobalLogs } from '../log/global/global-logs.js';
import { reportError } from '../log/global/report.js';
import { NodeLogs } from './node-logs.js';
import { LogFileAnnouncer } from './log-files.js';
import { WORKER_V8_FLAGS, workerEnv } from '../runtime-args.js';
import { BackupScheduler } from '../log/repository/scheduler.js';
import { peerPart } from './peer-invalidation.js';
import { SupervisorLink } from './supervisor-link.js';
import { SettingDelivery } from './setting-delivery.js';
import { dropRemovedHosts } from './removed-hosts.js';
import { checkSecrets } from '../license/secret-box.js';
import { HANDOVER_ENV } from '../ipc/supervisor-messages.js';
import { statusReport } from './status-report.js';
import { ServiceOps } from './service-ops.js';
import { Fleet } from './fleet/fleet.js';
import { fleetOf } from './fleet/wiring.js';
import { ServingGate } from './fleet/serving-gate.js';
import { InvalidationService } from './invalidation-service.js';
import { CentralLink } from './central/wiring.js';
import { readLogPipe, WORKER_STDIO } from '../log/pipe.js';
import { WorkerSlots, workerCount, type Slot } from './worker-slots.js';

/** A setting file as loaded: the setting, its text and its directory. */
type LoadedSetting = Awaited<ReturnType<typeof loadSettingFile>>;

export class Primary {
  private setting!: Setting;
  private baseDir!: string;
  /** Generations, confirmations and rollback of the settings sent to the workers. */
  private readonly delivery = new SettingDelivery((w, m) => this.send(w, m), () => this.baseDir);
  private shuttingDown = false;
  private readonly slots = new WorkerSlots({
    spawn: (slot) => this.fork(slot),
    send: (w, m) => this.send(w, m),
    drainTimeoutMs: () => this.drainTimeoutMs(),
    stopping: () => this.shuttingDown,
  });
  private readonly rpc = new RpcClient();
  /** The waiting asynchronous commands' way to the workers; a starting worker gets them before its setting. */
  private readonly prectrl = new PrectrlFeed(this.rpc);
  readonly bridge = new WorkerBridge({
    liveWorkers: () => this.liveWorkers(), connectedWorkers: () => this.connectedWorkers(), setting: () => this.setting,
  }, this.rpc);
  private api: ManagementApi | undefined;
  lifecycle!: SettingLifecycle;
  license!: LicenseService;
  private licenseWatch: LicenseWatch | undefined;
  /**
   * Proves a request on a worker's sibling port comes from another worker of this start (any
   * local process can reach those loopback ports). New at every start; replacement workers get
   * the same one, so old and new workers can hand off to each other during a rolling restart.
   */
  // One given in the primary's environment is taken as is (tests address a worker's internal
  // port with it); only whoever starts the node can set it.
  private readonly siblingSecret = process.env[SIBLING_SECRET_ENV] || randomBytes(32).toString('base64url');
  /** The node's session ids, handed to the workers in blocks. */
  private readonly sessionBlocks = new SessionBlocks();
  /** TLS session ticket keys shared by the workers, rotated on a period. */
  private readonly tickets = new TicketKeys((keys) => { for (const w of this.connectedWorkers()) this.send(w, { type: 'tls-ticket-keys', keys }); });
  /** Sums of the workers' counters, system figures, the statistics collector. */
  stats: StatsService | undefined;
  /** The graph history and its renderer (`/graph`). */
  private graphs: GraphService | undefined;
  /** Every log file of the node (global and per host), opened once the setting is loaded. */
  private logs: NodeLogs | undefined;
  /** The host log files the workers append to themselves. */
  private readonly logFiles = new LogFileAnnouncer(() => this.connectedWorkers(), (w, m) => this.send(w, m));

  /** Uploads of rolled log files to the backup repositories (env.log.repository). */
  // The repositories' `enc:` keys decrypt under the license, read at each upload (it may change).
  private readonly backups = new BackupScheduler({ watch: (event, body) => void this.lifecycle?.events.watch(event, undefined, body), secretKey: () => this.license?.secretKey() });
  readonly supervisor = new SupervisorLink();
  /** Central management (env.management.server), started with the management API. */
  private central: CentralLink | undefined;
  /** The new half of a restart: the old primary holds the management ports until `bind`. */
  private readonly handover = process.env[HANDOVER_ENV] === '1';
  /** Discovery, purge propagation, the Redis bus (lib/primary/fleet). */
  private fleet: Fleet | undefined;
  /** Listening sockets reach the workers once the node may serve: the bus caught up (or is off). */
  private readonly gate = new ServingGate();

  constructor(private readonly settingPath: string) {}

  async start(): Promise<void> {
    // Without a listener, SIGUSR1 opens node's inspector (a debugger port that runs any code).
    // Log rotation set-ups often send it; info.log and watch.log are opened for each line and
    // the system log is stdout, so there is nothing to reopen: it is only logged.
    process.on('SIGUSR1', () => systemLog.info('SIGUSR1 received; nothing to do'));
    const { loaded, logs } = await this.loadSetting();
    await this.openLifecycle(loaded, logs);
    // The cache directories exist before the first statistics sample: a disk the workers have
    // not created yet is not an unreachable one (State would read Emergency at start).
    for (const d of this.setting.env.cache.disks) await fs.mkdir(resolvePath(this.setting, d.path), { recursive: true }).catch(() => undefined);
    const fleet = this.fleet = fleetOf({
      setting: () => this.setting, settingText: () => this.lifecycle.runningRaw() ?? '', apiHost: () => this.api?.httpHost,
      lifecycle: this.lifecycle, bridge: this.bridge, rpc: this.rpc,
      cacheWorkers: () => this.gate.workers(this.liveWorkers()),
      connectedWorkers: () => this.connectedWorkers(),
    });
    this.gate.hold(fleet.start(this.gate.cacheReady).catch((err: Error) => systemLog.error({ err: err.message }, 'fleet start failed')));
    const { stats, graphs } = statisticsOf({
      bus: () => fleet.busFigures(), setting: () => this.setting, license: () => this.license,
      processes: () => [{ role: 'primary', pid: process.pid }, ...this.slots.roles()],
      crashLooping: () => this.slots.crashLooping(),
      managementAccess: () => this.api?.managementAccess ?? { Allow: 0, Deny: 0 },
    });
    this.stats = stats;
    this.graphs = graphs;
    // Before the workers: their first deltas have somewhere to go, and a collector address
    // that cannot be bound stops the start like the API's would.
    stats.start();
    this.tickets.start();
    // The collector's port and the log listener's are the old primary's until it hands them over.
    let logPort: number | undefined;
    if (!this.handover) logPort = await this.startTimedLogs(logs);
    const n = await this.startWorkers();
    const invalidation = new InvalidationService(this.bridge, () => this.setting);
    const api = this.api = managementApiOf({
      bridge: this.bridge, current: () => this.setting, lifecycle: this.lifecycle, license: this.license,
      discover: () => fleet.nodes(), recognized: (call) => fleet.recognized(call), state: () => stats.state(),
      service: new ServiceOps(this), invalidation, status: () => this.status(logPort), stats, graphs, prectrl: this.prectrl,
    });
    if (this.handover) {
      await this.supervisor.serving();
      await this.lifecycle.start();
      logPort = await this.startTimedLogs(logs);
    }
    await api.start();
    this.central = new CentralLink({
      setting: () => this.setting, lifecycle: this.lifecycle, invalidation, workers: () => this.connectedWorkers(),
      licenseId: () => this.license.current().SerialNumber, secretKey: () => this.license.secretKey(), productVer: PRODUCT_VERSION,
    });
    this.central.central.start();
    process.on('SIGTERM', () => void this.shutdown('SIGTERM'));
    process.on('SIGINT', () => void this.shutdown('SIGINT'));
    process.on('SIGHUP', () => void this.reload());
    process.on('SIGUSR2', () => void this.rollingRestart());
    this.supervisor.started();
    systemLog.info({ workers: n, api: api.httpPort ?? null, apiHost: api.httpHost ?? null, apiTls: api.httpsPort ?? null, stats: stats.collectorPort ?? null, logPort: logPort ?? null }, 'started');
  }

  /** The setting file (a setting.json lost in a crash comes back from the history first) and the node's logs. */
  private async loadSetting(): Promise<{ loaded: LoadedSetting; logs: NodeLogs }> {
    const restored = await restoreMissingSetting(this.settingPath);
    if (restored !== undefined) systemLog.warn({ setting: this.settingPath, hash: restored }, 'setting file was missing; restored from the history');
    const loaded = await loadSettingFile(this.settingPath);
    await checkStartCertificates(loaded.setting);
    this.setting = loaded.setting;
    this.baseDir = loaded.baseDir;
    const logs = new NodeLogs(new GlobalLogs(this.setting), this.baseDir, (files) => this.logFiles.announce(files));
    this.logs = logs;
    if (restored !== undefined) reportError({ code: '1004', detail: `hash ${restored}` });
    logs.configure(this.setting);
    return { loaded, logs };
  }

  /**
   * The license, then the setting lifecycle. The license never stops the start: a missing,
   * invalid or expired one makes the State Inactive. Its key is the one the setting's `enc:`
   * secrets must decrypt under.
   */
  private async openLifecycle(loaded: LoadedSetting, logs: NodeLogs): Promise<void> {
    this.license = await LicenseService.open(licensePaths(this.setting));
    const secrets = checkSecrets(this.setting, this.license.secretKey());
    if (secrets.length > 0) throw new SettingError(secrets);
    this.lifecycle = new SettingLifecycle({
      settingPath: this.settingPath, stateDir: resolvePath(this.setting, 'state'), running: loaded.setting,
      runningRaw: loaded.raw, baseDir: loaded.baseDir, version: PRODUCT_VERSION,
      runtime: { apply: (s, changed) => this.applyToWorkers(s, changed) }, logs: logs.global,
      secretKey: () => this.license.secretKey(),
    });
    // A new primary of a restart writes its start event once the old one wrote its stop event.
    if (!this.handover) await this.lifecycle.start();
    this.licenseWatch = new LicenseWatch(this.license, (c) => void logStateChange(c, (m, f) => this.lifecycle.events.info(m, f)));
    this.licenseWatch.start();
  }

  /** Forks the setting's number of workers; resolves to that number once they listen. */
  private async startWorkers(): Promise<number> {
    const here = path.dirname(fileURLToPath(import.meta.url));
    // SVC_WORKER_NODE_ARGS passes node flags to the workers only (e.g. `--cpu-prof` to profile).
    const extraArgs = (process.env.SVC_WORKER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    cluster.setupPrimary({ exec: path.join(here, '../../workers/rt-worker.js'), execArgv: [...process.execArgv, ...WORKER_V8_FLAGS, ...extraArgs], stdio: WORKER_STDIO });
    const n = workerCount(this.setting);
    systemLog.info({ workers: n, setting: this.settingPath }, 'starting');
    await this.slots.start(n);
    return n;
  }

  /** Starts the worker of a slot and resolves when it listens (rejects if it fails at start). */
  private fork(slot: Slot): Promise<Worker> {
    const worker = cluster.fork({ ...workerEnv(), SVC_WORKER_INDEX: String(slot.index), [SIBLING_SECRET_ENV]: this.siblingSecret });
    this.slots.forked(slot, worker);
    readLogPipe(worker.process.stdio, (b) => this.logs?.write(b));
    return new Promise((resolve, reject) => {
      let settled = false;
      worker.on('message', (m: WorkerMessage) => {
        this.rpc.onMessage(m);
        if (m.type === 'stats-deltas') {
          this.stats?.onDeltas(m, worker.id);
          return;
        }
        if (m.type === 'session-ids-request') {
          this.send(worker, { type: 'session-ids', ...this.sessionBlocks.take() });
          return;
        }
        if (m.type === 'invalidated' || m.type === 'settle-all') { peerPart(this.rpc, () => this.connectedWorkers(), worker, m); return; }
        if (m.type === 'listen-request') { this.gate.listen(worker, () => this.supervisor.relayListen(worker, m)); return; }
        if (m.type === 'purge-recognized') { this.fleet?.purgeRecognized(m); return; }
        if (m.type === 'log-files-switched') { this.logFiles.switched(worker, m.generation); return; }
        if (m.type === 'log-file-error') { this.logs?.fromWorker(m); return; }
        if (m.type === 'unlisten') { this.supervisor.unlisten(worker, m); return; }
        // The worker says hello once it listens for messages (ESM loads after cluster's 'online').
        if (m.type === 'hello') {
          this.send(worker, { type: 'tls-ticket-keys', keys: this.tickets.current() });
          this.logFiles.greet(worker);
          this.central?.send(worker);
          this.prectrl.greet(worker, () => this.delivery.sendRunning(worker, this.setting));
        } else if (m.type === 'ready' && settled) {
          this.delivery.acks.ack(m.generation, worker);
        } else if (m.type === 'ready' && !settled) {
          settled = true;
          this.gate.ready();
          this.slots.becameReady(slot, worker);
          // A setting committed while this worker started reaches it now.
          if (m.generation !== this.delivery.running) this.delivery.sendRunning(worker, this.setting);
          resolve(worker);
        } else if (m.type === 'listen-error' || m.type === 'apply-error') {
          systemLog.error({ worker: slot.index, detail: m }, 'worker could not apply the setting');
          const reason = m.type === 'apply-error' ? m.message : `cannot listen: ${m.errors.join('; ')}`;
          this.delivery.acks.refuse(m.generation, reason);
          if (!settled) { settled = true; reject(new Error(reason)); }
        }
      });
      worker.once('exit', (code, signal) => {
        this.supervisor.workerGone(worker);
        if (!settled) { settled = true; reject(new Error(`worker ${slot.index} exited during start (${signal ?? code})`)); }
        // A reload waiting for this worker's answer stops waiting for it.
        this.delivery.acks.gone(worker);
        this.logFiles.switched(worker, Infinity);
        this.stats?.workerGone(worker.id);
        this.slots.exited(slot, worker, code, signal);
      });
    });
  }

  liveWorkers(): Worker[] {
    return this.slots.live();
  }

  /** Every worker process still connected: starting and draining ones serve requests too. */
  connectedWorkers(): Worker[] {
    return this.slots.connected();
  }

  current(): Setting {
    return this.setting;
  }

  private send(worker: Worker, m: PrimaryMessage): void {
    if (worker.isConnected()) worker.send(m);
  }

  private drainTimeoutMs(): number {
    return (this.setting.env.management.cluster.meta.drainTimeout ?? 30) * 1000;
  }

  /**
   * Hands a validated setting (its env already the running one) to every worker and commits it
   * only when each confirmed it: then it becomes the running setting (the management API takes
   * its new allowList) and the content of removed hosts is deleted. A refusal, a listening socket
   * that cannot be opened or a timeout sends the running setting back to every worker and
   * rejects; the running setting stays.
   */
  async applyToWorkers(setting: Setting, changedHosts: string[] | 'all' = 'all'): Promise<void> {
    const previous = this.setting;
    const workers = this.liveWorkers();
    await this.delivery.replace(workers, setting, previous, changedHosts, () => this.liveWorkers(), () => void this.rollingRestart());
    this.setting = setting;
    this.api?.applySetting(setting);
    this.stats?.settingApplied(setting);
    this.graphs?.retain(setting.hosting.filter((h) => h.enable !== false).map((h) => h.name));
    this.logs?.configure(setting);
    this.backups.configure(setting, this.logs!.backupSources(setting));
    // Workers that became ready while the others applied got the previous setting.
    for (const w of this.liveWorkers()) if (!workers.includes(w)) this.delivery.sendRunning(w, setting);
    await dropRemovedHosts(this.rpc, this.liveWorkers(), previous, setting);
    systemLog.info({ generation: this.delivery.running }, 'setting reloaded');
  }

  /**
   * The statistics collector and the timed logs (resolves to the log listener's port), then the
   * backup scheduler: after the start event (its own 00030001 follows it in the watch log) and
   * after the metrics log, whose snapshots are one of its sources.
   */
  private async startTimedLogs(logs: NodeLogs): Promise<number | undefined> {
    await this.stats!.startCollector();
    const port = await logs.startTimed(() => this.setting, this.stats!.source);
    this.backups.configure(this.setting, logs.backupSources(this.setting));
    return port;
  }

  /** SIGHUP: deploy the local setting file; a bad file is refused and the running one stays. */
  async reload(): Promise<boolean> {
    try {
      // A signal comes from the command line (systemctl reload, kill -HUP), not from the API.
      const r = await this.lifecycle.deployLocal('sighup');
      if (r.restartPending.length > 0) systemLog.warn({ restartPending: r.restartPending }, 'env changes wait for a restart');
      return true;
    } catch (err) {
      const issues = err instanceof SettingError || err instanceof LoadFailure ? err.issues ?? [{ path: '', message: err.message }] : [{ path: '', message: (err as Error).message }];
      systemLog.error({ issues }, 'setting refused; the running setting stays');
      return false;
    }
  }

  /** `/monitoring/status`: `logPort` is the timed logs' listener, once open. */
  private status(logPort: number | undefined): Record<string, unknown> {
    return statusReport({
      version: PRODUCT_VERSION, state: this.stats?.state(), settingPath: this.settingPath, running: this.setting, artifact: this.lifecycle.artifact(),
      settingGeneration: this.delivery.running, workers: this.slots.describe(), license: this.license.current(),
      ports: { api: this.api?.httpPort, apiTls: this.api?.httpsPort, stats: this.stats?.collectorPort, log: logPort },
    });
  }

  /** SIGUSR2: each worker is replaced by a new one that listens before the old one drains. */
  rollingRestart(): Promise<void> {
    return this.slots.roll();
  }

  /**
   * Drains: the management API closes, the workers finish what they serve, every process exits 0.
   * `handover`: a new primary already serves on the same sockets; the management and statistics
   * ports are freed for it first, then the workers drain.
   */
  async shutdown(reason: string, handover = false): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    systemLog.info({ reason }, 'draining');
    await this.api?.close().catch(() => undefined);
    this.licenseWatch?.close();
    this.tickets.stop();
    this.backups.close();
    this.fleet?.stop();
    await this.central?.central.close().catch(() => undefined);
    await this.lifecycle?.close().catch(() => undefined);
    if (handover) {
      await this.stats?.close().catch(() => undefined);
      await this.logs?.closeTimed();
      this.supervisor.released();
    }
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exited = workers.map((w) => new Promise<void>((r) => (w.isDead() ? r() : w.once('exit', () => r()))));
    for (const w of workers) this.send(w, { type: 'drain', timeoutMs: this.drainTimeoutMs() });
    const hardStop = setTimeout(() => { for (const w of workers) if (!w.isDead()) w.process.kill('SIGKILL'); }, this.drainTimeoutMs() + 5000);
    await Promise.all(exited);
    clearTimeout(hardStop);
    if (!handover) await this.stats?.close().catch(() => undefined);
    // After the statistics clock stopped: the open step is written for the next start (or, in a
    // handover, added to the step the new primary is filling).
    await this.graphs?.close().catch((err: Error) => systemLog.error({ err: err.message }, 'graph history could not be closed'));
    await this.logs?.close();
    systemLog.info('stopped');
    process.exit(0);
  }
}
