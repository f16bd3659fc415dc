// The primary process: validates the setting before anything starts, forks the RT workers,
// keeps the hash ring of live workers, replaces a worker that dies (with back-off when it keeps
// dying), reloads on SIGHUP, rolls the workers on SIGUSR2, only logs SIGUSR1 and drains everything
// on SIGTERM.
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemLog } from '../log/system-log.js';
import { restoreMissingSetting, SettingLifecycle } from '../lifecycle/index.js';
import { licensePaths, LicenseService } from '../license/service.js';
import { LicenseWatch, type StateChange } from '../license/watch.js';
import { loadSettingFile, resolvePath, SettingError } from '../setting/load.js';
import { certIssues, homeFiles } from '../worker/tls/contexts.js';
import type { Setting } from '../setting/types.js';
import { ManagementApi } from '../manager/index.js';
import { SIBLING_SECRET_ENV, type PrimaryMessage, type WorkerMessage } from '../ipc/messages.js';
import { managementRoutes, PRODUCT_VERSION } from './management-routes.js';
import { RpcClient } from '../ipc/rpc.js';
import { WorkerBridge } from './rt-bridge.js';
import { SessionBlocks } from './session-blocks.js';
import { StatsService } from '../stats/service.js';
import { statisticsRoutes } from '../manager/routes/statistics.js';
import { graphRoutes } from '../manager/routes/graph.js';
import { GraphService } from '../graph/service.js';
import { LogHub } from '../log/hub.js';
import { dropMemoryEverywhere, settleEverywhere } from './peer-invalidation.js';

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  quickDeaths: number;
  ready: boolean;
}

const QUICK_DEATH_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;

function workerCount(setting: Setting): number {
  const meta = setting.env.management.cluster.meta;
  if (!meta.enable) return 1;
  return meta.workers > 0 ? meta.workers : Math.max(1, os.availableParallelism());
}

export class Primary {
  private setting!: Setting;
  private baseDir!: string;
  /** Generation counter of the settings sent to the workers (each delivery gets a new one). */
  private generation = 0;
  /** The generation `setting` was delivered under: a worker that reports another gets it again. */
  private settingGeneration = 0;
  private readonly slots: Slot[] = [];
  private shuttingDown = false;
  private readonly retiring = new Set<Worker>();
  private readonly rpc = new RpcClient();
  readonly bridge = new WorkerBridge({
    liveWorkers: () => this.liveWorkers(), connectedWorkers: () => this.connectedWorkers(), setting: () => this.setting,
  }, this.rpc);
  private api: ManagementApi | undefined;
  lifecycle!: SettingLifecycle;
  license!: LicenseService;
  private licenseWatch: LicenseWatch | undefined;
  private readonly acks = new Map<number, { waiting: Set<Worker>; resolve(): void; reject(e: Error): void }>();
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
  /** Sums of the workers' counters, system figures, the statistics collector. */
  stats: StatsService | undefined;
  /** The graph history and its renderer (`/graph`). */
  private graphs: GraphService | undefined;
  /** The writer of the per-host log files; workers send it their lines. */
  private readonly logs = new LogHub((file, err) => systemLog.error({ file, err: err.message }, 'log file cannot be written; its lines are dropped (reported once a minute)'));

  constructor(private readonly settingPath: string) {}

  async start(): Promise<void> {
    // Without a listener, SIGUSR1 opens node's inspector (a debugger port that runs any code).
    // Log rotation set-ups often send it; info.log and watch.log are opened for each line and
    // the system log is stdout, so there is nothing to reopen: it is only logged.
    process.on('SIGUSR1', () => systemLog.info('SIGUSR1 received; nothing to do'));
    // Recovery before the load: a setting.json lost in a crash comes back from the history.
    const restored = await restoreMissingSetting(this.settingPath);
    if (restored !== undefined) systemLog.warn({ setting: this.settingPath, hash: restored }, 'setting file was missing; restored from the history');
    const loaded = await loadSettingFile(this.settingPath);
    // The certificates on disk must serve: a bad one refuses the start at its JSON path rather
    // than every worker failing to open its TLS port.
    const certs = certIssues(loaded.setting, () => homeFiles(loaded.setting));
    if (certs.length > 0) throw new SettingError(certs);
    this.setting = loaded.setting;
    this.baseDir = loaded.baseDir;
    this.logs.configure(this.setting, this.baseDir);
    this.lifecycle = new SettingLifecycle({
      settingPath: this.settingPath, stateDir: resolvePath(this.setting, 'state'), running: loaded.setting,
      runningRaw: loaded.raw, baseDir: loaded.baseDir, version: PRODUCT_VERSION,
      runtime: { apply: (s, changed) => this.applyToWorkers(s, changed) },
    });
    await this.lifecycle.start();
    // The license never stops the start: a missing, invalid or expired one makes the State Inactive.
    this.license = await LicenseService.open(licensePaths(this.setting));
    this.licenseWatch = new LicenseWatch(this.license, (c) => void this.licenseChanged(c));
    this.licenseWatch.start();
    // Workers accept on the shared listening sockets themselves (no round-robin hand-off
    // through the primary), so the primary is never on the data path.
    // The cache directories exist before the first statistics sample: a disk the workers have
    // not created yet is not an unreachable one (State would read Emergency at start).
    for (const d of this.setting.env.cache.disks) await fs.mkdir(resolvePath(this.setting, d.path), { recursive: true }).catch(() => undefined);
    this.stats = new StatsService({
      setting: () => this.setting, version: PRODUCT_VERSION,
      pids: () => [process.pid, ...this.slots.flatMap((s) => (s.worker?.process.pid === undefined ? [] : [s.worker.process.pid]))],
      disks: () => this.setting.env.cache.disks.map((d) => resolvePath(this.setting, d.path)),
      licenseState: () => this.license.state(),
      // Three quick deaths in a row: the back-off is under way (see replace).
      crashLooping: () => this.slots.some((s) => s.quickDeaths >= 3),
      managementAccess: () => this.api?.managementAccess ?? { Allow: 0, Deny: 0 },
      indexPath: () => resolvePath(this.setting, this.setting.env.cache.indexPath),
    });
    this.graphs = new GraphService({
      file: path.join(resolvePath(this.setting, 'state'), 'graph-history.sqlite'), source: this.stats.source,
      warn: (why) => systemLog.warn(why),
    });
    const graphs = this.graphs;
    this.stats.onSecond(() => graphs.second());
    // Before the workers: their first deltas have somewhere to go, and a collector address
    // that cannot be bound stops the start like the API's would.
    await this.stats.start();
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    const here = path.dirname(fileURLToPath(import.meta.url));
    // SVC_WORKER_NODE_ARGS passes node flags to the workers only (e.g. `--cpu-prof` to profile).
    const extraArgs = (process.env.SVC_WORKER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    cluster.setupPrimary({ exec: path.join(here, '../../workers/rt-worker.js'), execArgv: [...process.execArgv, ...extraArgs] });
    const n = workerCount(this.setting);
    systemLog.info({ workers: n, setting: this.settingPath }, 'starting');
    for (let i = 0; i < n; i++) this.slots.push({ index: i, worker: undefined, startedAt: 0, quickDeaths: 0, ready: false });
    await Promise.all(this.slots.map((s) => this.forkAtStart(s)));
    this.broadcastRing();
    this.api = new ManagementApi({
      getSetting: () => this.setting, version: PRODUCT_VERSION, rt: this.bridge,
      extraRoutes: managementRoutes({
        bridge: this.bridge, current: () => this.setting, lifecycle: this.lifecycle, license: this.license,
        // Discovery of other nodes belongs to the cluster work; until then there are none.
        discover: () => [],
        state: () => this.stats!.state(),
      }).concat(statisticsRoutes(this.stats.source), graphRoutes(this.graphs)),
    });
    await this.api.start();
    process.on('SIGTERM', () => void this.shutdown('SIGTERM'));
    process.on('SIGINT', () => void this.shutdown('SIGINT'));
    process.on('SIGHUP', () => void this.reload());
    process.on('SIGUSR2', () => void this.rollingRestart());
    systemLog.info({ workers: n, api: this.api.httpPort ?? null, apiHost: this.api.httpHost ?? null, apiTls: this.api.httpsPort ?? null, stats: this.stats.collectorPort ?? null }, 'started');
  }

  /** A worker that fails at start-up is tried again a few times before the start fails. */
  private async forkAtStart(slot: Slot): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.fork(slot);
        return;
      } catch (err) {
        if (attempt >= 3 || /EADDRINUSE|EACCES|EADDRNOTAVAIL/.test((err as Error).message)) throw err;
        systemLog.error({ worker: slot.index, attempt, err: (err as Error).message }, 'worker failed to start; trying again');
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }

  /** Starts the worker of a slot and resolves when it listens (rejects if it fails at start). */
  private fork(slot: Slot): Promise<Worker> {
    const worker = cluster.fork({ SVC_WORKER_INDEX: String(slot.index), [SIBLING_SECRET_ENV]: this.siblingSecret });
    slot.startedAt = Date.now();
    return new Promise((resolve, reject) => {
      let settled = false;
      worker.on('message', (m: WorkerMessage) => {
        this.rpc.onMessage(m);
        if (m.type === 'stats-deltas') {
          this.stats?.onDeltas(m, worker.id);
          return;
        }
        if (m.type === 'log') {
          this.logs.write(m);
          return;
        }
        if (m.type === 'session-ids-request') {
          this.send(worker, { type: 'session-ids', ...this.sessionBlocks.take() });
          return;
        }
        if (m.type === 'invalidated' || m.type === 'settle-all') { this.peerPart(worker, m); return; }
        // The worker says hello once it listens for messages (ESM loads after cluster's 'online').
        if (m.type === 'hello') {
          this.sendSetting(worker, this.setting, this.settingGeneration, 'all');
        } else if (m.type === 'ready' && settled) {
          this.ack(m.generation, worker);
        } else if (m.type === 'ready' && !settled) {
          settled = true;
          const previous = slot.worker;
          slot.worker = worker;
          slot.ready = true;
          if (previous !== undefined && previous !== worker) this.retire(previous);
          // A setting committed while this worker started reaches it now.
          if (m.generation !== this.settingGeneration) this.sendSetting(worker, this.setting, this.settingGeneration, 'all');
          resolve(worker);
        } else if (m.type === 'listen-error' || m.type === 'apply-error') {
          systemLog.error({ worker: slot.index, detail: m }, 'worker could not apply the setting');
          const reason = m.type === 'apply-error' ? m.message : `cannot listen: ${m.errors.join('; ')}`;
          this.acks.get(m.generation)?.reject(new Error(reason));
          if (!settled) { settled = true; reject(new Error(reason)); }
        }
      });
      worker.once('exit', (code, signal) => {
        if (!settled) { settled = true; reject(new Error(`worker ${slot.index} exited during start (${signal ?? code})`)); }
        // A reload waiting for this worker's answer stops waiting for it.
        for (const generation of [...this.acks.keys()]) this.ack(generation, worker);
        this.stats?.workerGone(worker.id);
        this.onExit(slot, worker, code, signal);
      });
    });
  }

  private onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    this.retiring.delete(worker);
    if (slot.worker !== worker || this.shuttingDown) return;
    slot.worker = undefined;
    slot.ready = false;
    this.broadcastRing();
    const lived = Date.now() - slot.startedAt;
    slot.quickDeaths = lived < QUICK_DEATH_MS ? slot.quickDeaths + 1 : 0;
    systemLog.error({ worker: slot.index, code, signal }, 'worker died; replacing it');
    this.replace(slot);
  }

  /** Starts a new worker for an empty slot, with back-off while replacements keep failing. */
  private replace(slot: Slot): void {
    const delay = slot.quickDeaths <= 1 ? 0 : Math.min(MAX_BACKOFF_MS, 250 * 2 ** (slot.quickDeaths - 2));
    if (delay > 0) systemLog.info({ worker: slot.index, restartInMs: delay }, 'worker restart delayed (back-off)');
    setTimeout(() => {
      if (this.shuttingDown) return;
      this.fork(slot).then(() => this.broadcastRing(), (err: Error) => {
        systemLog.error({ worker: slot.index, err: err.message }, 'replacement failed');
        slot.quickDeaths++;
        if (slot.worker === undefined) this.replace(slot);
      });
    }, delay).unref();
  }

  liveWorkers(): Worker[] {
    return this.slots.filter((s) => s.ready && s.worker !== undefined && s.worker.isConnected()).map((s) => s.worker!);
  }

  /** Every worker process still connected: starting and draining ones serve requests too. */
  connectedWorkers(): Worker[] {
    return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
  }

  /** The other workers' part of a worker's invalidation; the worker answers its client after `done`. */
  private peerPart(from: Worker, m: Extract<WorkerMessage, { type: 'invalidated' | 'settle-all' }>): void {
    const workers = (): Worker[] => this.connectedWorkers();
    const work = m.type === 'invalidated'
      ? dropMemoryEverywhere(this.rpc, workers, m.items, from)
      : settleEverywhere(this.rpc, workers, m.targets, from);
    void work.then(() => this.send(from, { type: 'done', id: m.id }));
  }

  current(): Setting {
    return this.setting;
  }

  private send(worker: Worker, m: PrimaryMessage): void {
    if (worker.isConnected()) worker.send(m);
  }

  private broadcastRing(): void {
    const members = this.slots.filter((s) => s.ready).map((s) => s.index);
    for (const s of this.slots) if (s.worker) this.send(s.worker, { type: 'ring', members });
    for (const w of this.retiring) this.send(w, { type: 'ring', members });
  }

  private drainTimeoutMs(): number {
    return (this.setting.env.management.cluster.meta.drainTimeout ?? 30) * 1000;
  }

  private retire(worker: Worker): void {
    this.retiring.add(worker);
    this.send(worker, { type: 'drain', timeoutMs: this.drainTimeoutMs() });
  }

  private sendSetting(worker: Worker, setting: Setting, generation: number, changedHosts: string[] | 'all'): void {
    this.send(worker, { type: 'setting', setting, baseDir: this.baseDir, generation, changedHosts });
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
    let generation = this.settingGeneration;
    if (workers.length > 0) {
      try {
        generation = await this.deliver(workers, setting, changedHosts);
      } catch (err) {
        systemLog.error({ err: (err as Error).message }, 'setting refused by the workers; rolling back');
        try {
          const back = await this.deliver(this.liveWorkers(), previous, changedHosts);
          this.settingGeneration = back;
        } catch (e) {
          // A worker that cannot take the running setting back is replaced with it.
          systemLog.error({ err: (e as Error).message }, 'rollback failed; restarting the workers');
          void this.rollingRestart();
        }
        throw err;
      }
    }
    this.setting = setting;
    this.settingGeneration = generation;
    this.api?.applySetting(setting);
    this.stats?.settingApplied(setting);
    this.graphs?.retain(setting.hosting.filter((h) => h.enable !== false).map((h) => h.name));
    this.logs.configure(setting, this.baseDir);
    // Workers that became ready while the others applied got the previous setting.
    for (const w of this.liveWorkers()) if (!workers.includes(w)) this.sendSetting(w, setting, generation, 'all');
    await this.dropRemovedHosts(previous, setting);
    systemLog.info({ generation }, 'setting reloaded');
  }

  /** Sends a setting to the workers; resolves to its generation when every one applied it. */
  private async deliver(workers: Worker[], setting: Setting, changedHosts: string[] | 'all'): Promise<number> {
    const generation = ++this.generation;
    if (workers.length === 0) return generation;
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { this.acks.delete(generation); reject(new Error('workers did not confirm the setting within 30 s')); }, 30_000);
      this.acks.set(generation, {
        waiting: new Set(workers),
        resolve: () => { clearTimeout(timer); this.acks.delete(generation); resolve(); },
        reject: (e) => { clearTimeout(timer); this.acks.delete(generation); reject(e); },
      });
    });
    for (const w of workers) this.sendSetting(w, setting, generation, changedHosts);
    await done;
    return generation;
  }

  /**
   * A host removed from hosting[] loses all its content (document 2), so adding it again starts
   * empty: every worker drops its memory objects, one of them the shared disk objects and rows.
   */
  private async dropRemovedHosts(previous: Setting, next: Setting): Promise<void> {
    const kept = new Set(next.hosting.map((h) => h.name));
    const names = previous.hosting.map((h) => h.name).filter((n) => !kept.has(n));
    if (names.length === 0) return;
    const workers = this.liveWorkers();
    if (workers.length === 0) return;
    try {
      // First every worker: its fetches of those hosts finish writing, its memory objects go.
      // Only then one worker empties the shared disk, so no late write brings a row back.
      await Promise.all(workers.map((w) => this.rpc.call(w, 'drop-hosts', { names, diskToo: false }, 120_000)));
      const objects = await this.rpc.call(workers[0]!, 'drop-hosts', { names, diskToo: true }, 120_000);
      systemLog.info({ hosts: names, objects }, 'content of removed hosts deleted');
    } catch (err) {
      systemLog.error({ hosts: names, err: (err as Error).message }, 'content of removed hosts could not be deleted');
    }
  }

  private ack(generation: number, worker: Worker): void {
    const a = this.acks.get(generation);
    if (a === undefined) return;
    a.waiting.delete(worker);
    if (a.waiting.size === 0) a.resolve();
  }

  /** The service State the license decides, in the info log (and the system log) at each change. */
  private async licenseChanged(c: StateChange): Promise<void> {
    const fields = { State: c.state, Status: c.status, ...(c.reason === undefined ? {} : { reason: c.reason }) };
    const message = c.previous === undefined ? `license state at start: ${c.state}` : `license state changed: ${c.previous} -> ${c.state}`;
    if (c.state === 'Inactive') systemLog.warn(fields, message);
    else systemLog.info(fields, message);
    await this.lifecycle.events.info(message, fields).catch(() => undefined);
  }

  /** SIGHUP: deploy the local setting file; a bad file is refused and the running one stays. */
  async reload(): Promise<boolean> {
    try {
      await this.lifecycle.deployLocal();
      return true;
    } catch (err) {
      const issues = err instanceof SettingError ? err.issues : [{ path: '', message: (err as Error).message }];
      systemLog.error({ issues }, 'setting refused; the running setting stays');
      return false;
    }
  }

  /** SIGUSR2: each worker is replaced by a new one that listens before the old one drains. */
  async rollingRestart(): Promise<void> {
    for (const slot of this.slots) {
      if (this.shuttingDown) return;
      try {
        await this.fork(slot);
      } catch (err) {
        systemLog.error({ worker: slot.index, err: (err as Error).message }, 'rolling restart: replacement failed');
      }
    }
    systemLog.info('rolling restart done');
  }

  async shutdown(reason: string): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    systemLog.info({ reason }, 'draining');
    await this.api?.close().catch(() => undefined);
    this.licenseWatch?.close();
    await this.lifecycle?.close().catch(() => undefined);
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exited = workers.map((w) => new Promise<void>((r) => (w.isDead() ? r() : w.once('exit', () => r()))));
    for (const w of workers) this.send(w, { type: 'drain', timeoutMs: this.drainTimeoutMs() });
    const hardStop = setTimeout(() => { for (const w of workers) if (!w.isDead()) w.process.kill('SIGKILL'); }, this.drainTimeoutMs() + 5000);
    await Promise.all(exited);
    clearTimeout(hardStop);
    await this.stats?.close().catch(() => undefined);
    // After the statistics clock stopped: the open step is written for the next start.
    await this.graphs?.close().catch((err: Error) => systemLog.error({ err: err.message }, 'graph history could not be closed'));
    await this.logs.close().catch(() => undefined);
    systemLog.info('stopped');
    process.exit(0);
  }
}
