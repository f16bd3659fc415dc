// SettingLifecycle: the one owner of setting.json after start. It validates candidates (local
// file, upload, restore, virtual-host edits), applies them to the running service through
// RuntimeHooks, keeps env changes as the `artifact` until restart, stores every applied setting
// in the history, and writes the info and watch logs. Mutations run one at a time.
// Deployments of a whole setting are in sources.ts and virtual-host edits in vhosts.ts (both end
// in commit()); the recovery at start is in recovery.ts.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Setting } from '../setting/types.js';
import { writeFileAtomic } from '../files/atomic.js';
import { loadCandidate, LoadFailure, type Candidate } from './candidate.js';
import { GlobalLogs } from '../log/global/global-logs.js';
import { WATCH } from '../log/global/watch-events.js';
import { settingWarnings } from '../setting-check/warnings.js';
import { systemLog } from '../log/system-log.js';
import { changedPaths, hostChanges, sameValue, withLiveEnv, withoutHosting } from './diff.js';
import { HistoryStore, sameContent, toEntry, type HistoryEntry, type HistoryRow } from './history.js';
import { stageLinked } from './install.js';
import { linkedFileDirs } from './linked-dirs.js';
import { reconcileAfterCrash, type Recovered } from './recovery.js';
import { deployLocalFile, packageBody, restorePackage, uploadBody, type Applied, type RestoreResult } from './sources.js';
import { writeStatePointer } from './state-pointer.js';
import { buildPackage, contentHash, md5, type LinkedRef } from './package.js';
import type { SecretKey } from '../license/secret-box.js';

export interface RuntimeHooks {
  /**
   * Applies a validated setting to the running service (everything except env, which the caller
   * already replaced with the running env); resolves when every worker applied it, rejects with
   * a reason.
   */
  apply(setting: Setting, changedHosts: string[] | 'all'): Promise<void>;
}

export interface SettingLifecycleOptions {
  settingPath: string;
  /** history.sqlite, packages/ and a tmp/ work directory. */
  stateDir: string;
  running: Setting;
  runningRaw: string;
  /** Directory of setting.json (relative basehost files, a relative env.home). */
  baseDir: string;
  runtime: RuntimeHooks;
  version: string;
  /** The process's global logs (the primary's); without it the lifecycle opens and closes its own. */
  logs?: GlobalLogs;
  /** The key of the node's license for `enc:` secrets (undefined: no valid license); absent: not checked. */
  secretKey?: () => SecretKey | undefined;
}

export type PackageAnswer =
  | { kind: 'disabled' }
  | { kind: 'none' }
  | { kind: 'missing' }
  | { kind: 'ok'; file: string; data: Buffer };

const HOUR = 3_600_000;

export class SettingLifecycle {
  readonly events: GlobalLogs;
  readonly version: string;
  private current: Setting;
  private currentRaw: string;
  private pending: Setting | undefined;
  private store: Promise<HistoryStore> | undefined;
  private lock: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly changeListeners: ((source: string) => void)[] = [];

  constructor(private readonly opts: SettingLifecycleOptions) {
    this.current = opts.running;
    this.currentRaw = opts.runningRaw;
    this.version = opts.version;
    // Log places are env members: fixed until the next start.
    this.events = opts.logs ?? new GlobalLogs(opts.running);
  }

  running(): Setting {
    return this.current;
  }

  /** The setting written with an env change that waits for a restart, if any. */
  artifact(): Setting | undefined {
    return this.pending;
  }

  get settingPath(): string {
    return this.opts.settingPath;
  }

  private get workDir(): string {
    return path.join(this.opts.stateDir, 'tmp');
  }

  /** False when meta.history.retention.count is 0: no history, no packages, download 406. */
  historyEnabled(): boolean {
    return this.current.meta.history.retention.count > 0;
  }

  history(): Promise<HistoryStore> {
    this.store ??= HistoryStore.open(this.opts.stateDir);
    return this.store;
  }

  /** Runs mutations one after another. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  /** Recovery, then the start event (00010001) and the fullsync schedule. */
  async start(): Promise<void> {
    await this.recover();
    await writeStatePointer(this.opts.settingPath, this.opts.stateDir);
    await this.events.watch(WATCH.started, undefined, withoutHosting(this.current));
    await this.warnAtLoad(this.current, this.currentRaw);
    await this.fullsync();
    // Hourly: the fullsync records, and retention by age (which also runs on every commit and
    // history read), so old entries go even on a node nobody deploys to.
    this.timer = setInterval(() => {
      void this.fullsync().catch(() => undefined);
      void this.pruneHistory().catch(() => undefined);
    }, HOUR);
    this.timer.unref();
  }

  /** The stop event (00010002); closes the history. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.serial(async () => {
      await this.events.watch(WATCH.stopped, undefined, {});
      if (this.opts.logs === undefined) await this.events.close();
      if (this.store !== undefined) (await this.store).close();
      this.store = undefined;
    });
  }

  /** Makes setting.json, its linked files and the history agree after a crash (recovery.ts). */
  recover(): Promise<Recovered> {
    return this.serial(() => reconcileAfterCrash({
      settingPath: this.opts.settingPath,
      baseDir: this.opts.baseDir,
      workDir: this.workDir,
      journalPath: this.journalPath,
      history: () => this.history(),
      historyEnabled: this.historyEnabled(),
      running: this.current,
      runningRaw: this.currentRaw,
      events: this.events,
      loadOptions: (checkFiles, staged) => this.loadOptions(checkFiles, staged),
      record: (raw, refs, ver, content) => this.record(raw, refs, undefined, ver, content),
    }));
  }

  /** The install journal: the entry whose linked files a commit is installing (recovery.ts). */
  private get journalPath(): string {
    return path.join(this.opts.stateDir, 'install.pending');
  }

  loadOptions(checkFiles: boolean, staged?: string): Parameters<typeof loadCandidate>[1] {
    const linkedDirs = linkedFileDirs(this.current.env);
    return {
      settingDir: this.opts.baseDir, runningHome: this.current.env.home, checkFiles, linkedDirs,
      ...(this.opts.secretKey === undefined ? {} : { secrets: { key: this.opts.secretKey() } }),
      ...(staged === undefined ? {} : { staged }),
    };
  }

  /**
   * `GET /setting/deploy/local`: the edited setting.json on disk, applied. Throws LoadFailure.
   * `source` tells who asked (SIGHUP gives `sighup`): the logs and central feedback name it.
   */
  deployLocal(source = 'deploy/local'): Promise<Applied> {
    return deployLocalFile(this, source);
  }

  /**
   * `POST /setting/upload|import|validate` after the route checked the headers: a JSON body or a
   * multipart body. With `apply` false nothing changes and, for a JSON body, linked files are
   * not required to exist. Throws LoadFailure (codes 1-5).
   */
  upload(contentType: string, body: Buffer, apply: boolean): Promise<Applied> {
    return uploadBody(this, this.workDir, contentType, body, apply);
  }

  /** A package (tgz or setting.json) brought by a central-management feed, applied as an upload. */
  applyPackage(body: Buffer, source: string): Promise<Applied> {
    return packageBody(this, this.workDir, body, source);
  }

  /**
   * `fn(source)` after every committed setting (the commit's source: upload, deploy/local,
   * restore <hash>, vhosts, a feed) and after `backup()` (source `backup`).
   */
  onChange(fn: (source: string) => void): void {
    this.changeListeners.push(fn);
  }

  /** The running setting as a package (setting.json and its linked files), as the history stores it. */
  async runningPackage(): Promise<Buffer> {
    const c = await loadCandidate(this.currentRaw, this.loadOptions(false));
    return buildPackage(this.currentRaw, c.refs, undefined, this.workDir);
  }

  /** `GET /setting/restore/<hash>`: result 0-4 of document 1. */
  restore(hash: string): Promise<RestoreResult> {
    return restorePackage(this, this.workDir, hash);
  }

  /**
   * Applies a validated candidate. Order, so that a crash at any moment leaves the old or the new
   * setting whole: linked files staged beside their targets; runtime applied (a refusal discards
   * them and throws LoadFailure 4); package and history row; the install journal; setting.json
   * (the commit point); linked files renamed into place; journal removed; logs. Call inside serial().
   */
  async commit(c: Candidate, source: string): Promise<Applied> {
    const prev = this.current;
    // env waits for a restart except the API's access rules (withLiveEnv); what waits is said
    // as such, by JSON path, not reported as applied.
    const liveEnv = withLiveEnv(prev.env, c.setting.env);
    const restartPending = changedPaths(liveEnv, c.setting.env, 'env');
    const envChanged = restartPending.length > 0;
    const applied: Setting = envChanged ? { ...c.setting, env: liveEnv } : c.setting;
    const changes = hostChanges(prev, applied);
    const changedHosts = applied.meta.setting.deploy === 'shared' ? changes.affected : 'all';
    const staged = await stageLinked(c);
    try {
      await this.opts.runtime.apply(applied, changedHosts);
    } catch (err) {
      await staged.discard();
      const reason = err instanceof Error ? err.message : String(err);
      this.events.error({ code: '1002', detail: `from ${source}: ${reason}` });
      await this.events.info('setting not applied: the runtime refused it', { source, reason });
      throw new LoadFailure(4, `not applied: ${reason}`);
    }
    let hash: string | undefined;
    try {
      const content = await contentHash(c.raw, c.refs, c.staged);
      let row: HistoryRow | undefined;
      if (this.historyEnabled()) {
        row = (await this.history()).newest();
        if (!sameContent(row, c.raw, content)) {
          row = await this.record(c.raw, c.refs, c.staged, applied.meta.version, content);
          hash = row.hash;
        }
      }
      if (staged.targets.length > 0 && row !== undefined) await writeFileAtomic(this.journalPath, `${row.hash}\n`);
      await writeFileAtomic(this.opts.settingPath, c.raw);
    } catch (err) {
      // Nothing was committed: the workers go back to the running setting.
      await staged.discard();
      await this.opts.runtime.apply(prev, changedHosts).catch(() => undefined);
      await fs.rm(this.journalPath, { force: true });
      throw err;
    }
    this.current = applied;
    this.pending = envChanged ? c.setting : undefined;
    this.currentRaw = c.raw;
    await staged.commit();
    await fs.rm(this.journalPath, { force: true });
    if (this.store !== undefined) await (await this.store).prune(applied.meta.history.retention);
    await this.logChanges(prev, changes, source, { hash, changedHosts, artifact: envChanged, restartPending });
    if (restartPending.length > 0) {
      await this.events.info(`setting from ${source}: env changes wait for a restart (svc restart): ${restartPending.join(', ')}`, { source, restartPending });
    }
    // The candidate's, not this.current's: an env change waits for a restart but is warned about now.
    const warnings = await this.warnAtLoad(c.setting, c.raw);
    for (const fn of this.changeListeners) fn(source);
    return { artifact: envChanged, restartPending, changedHosts, ...(hash === undefined ? {} : { hash }), ...(warnings.length === 0 ? {} : { warnings }) };
  }

  /** A package of `raw` with its linked files, and its history row. */
  private async record(raw: string, refs: LinkedRef[], staged: string | undefined, ver: string, content?: string): Promise<HistoryRow> {
    const pkg = await buildPackage(raw, refs, staged, this.workDir);
    return (await this.history()).add(pkg, md5(raw), ver, content ?? await contentHash(raw, refs, staged));
  }

  /** Warnings of a loaded setting in the info log (and the process log). */
  private async warnAtLoad(setting: Setting, raw: string): Promise<string[]> {
    const warnings = settingWarnings(setting, raw);
    for (const w of warnings) {
      systemLog.warn(w);
      await this.events.info(`warning: ${w}`);
    }
    return warnings;
  }

  private async logChanges(prev: Setting, ch: ReturnType<typeof hostChanges>, source: string, fields: Record<string, unknown>): Promise<void> {
    const store = await this.history();
    for (const h of ch.added) {
      await this.events.watch(WATCH.hostAdded, h.name, h);
      store.setFullsync(h.name, Date.now());
    }
    for (const name of ch.deleted) await this.events.watch(WATCH.hostDeleted, name, { name });
    for (const c of ch.changed) await this.events.watch(WATCH.hostChanged, c.name, c.body);
    await this.events.info(`setting applied from ${source}`, {
      ...fields,
      deploy: this.current.meta.setting.deploy,
      added: ch.added.map((h) => h.name),
      deleted: ch.deleted,
      changed: ch.changed.map((c) => c.name),
      // Global members that changed, e.g. {"functions": ["network"], "meta": ["history"]}.
      globals: changedMembers(prev, this.current),
    });
  }

  /**
   * 00020004: the whole entry of each host whose last full record in the watch log is older
   * than env.log.watch.events.setting.fullsync days (0 = never), and of hosts never recorded.
   */
  async fullsync(now = Date.now()): Promise<string[]> {
    const days = this.current.env.log.watch.events.setting.fullsync;
    if (days <= 0 || !this.events.hostEventsEnabled) return [];
    return this.serial(async () => {
      const store = await this.history();
      const done: string[] = [];
      for (const h of this.current.hosting) {
        const last = store.lastFullsync(h.name);
        if (last !== undefined && now - last < days * 86_400_000) continue;
        await this.events.watch(WATCH.hostFullsync, h.name, h);
        store.setFullsync(h.name, now);
        done.push(h.name);
      }
      return done;
    });
  }

  /** `GET /setting/deploy/backup`: the running setting as a new history entry. */
  backup(): Promise<HistoryEntry> {
    return this.serial(async () => {
      if (!this.historyEnabled()) throw new Error('setting backup is disabled (meta.history.retention.count is 0)');
      const c = await loadCandidate(this.currentRaw, this.loadOptions(false));
      const row = await this.record(this.currentRaw, c.refs, undefined, this.current.meta.version);
      await (await this.history()).prune(this.current.meta.history.retention);
      await this.events.info('setting backed up', { hash: row.hash });
      for (const fn of this.changeListeners) fn('backup');
      return toEntry(row);
    });
  }

  async historyEntries(): Promise<HistoryEntry[]> {
    if (!this.historyEnabled()) return [];
    await this.pruneHistory();
    return (await this.history()).list().map(toEntry);
  }

  /** Applies meta.history.retention now (days pass without any deployment). */
  pruneHistory(): Promise<void> {
    return this.serial(async () => {
      if (this.historyEnabled()) await (await this.history()).prune(this.current.meta.history.retention);
    });
  }

  /** The package of the loaded setting (the newest history entry), for `/setting/download`. */
  async loadedPackage(): Promise<PackageAnswer> {
    if (!this.historyEnabled()) return { kind: 'disabled' };
    const store = await this.history();
    const row = store.newest();
    if (row === undefined) return { kind: 'none' };
    try {
      return { kind: 'ok', file: row.file, data: await fs.readFile(store.packagePath(row)) };
    } catch {
      return { kind: 'missing' };
    }
  }

  /**
   * The text of the running setting (`GET /setting/setting.json`, the base of virtual-host
   * edits): what was last loaded or applied, not the file on disk, which may hold edits not
   * deployed yet. Undefined only before the first load.
   */
  runningRaw(): string | undefined {
    return this.currentRaw === '' ? undefined : this.currentRaw;
  }
}

/** The members of `meta` and `functions` whose value changed, by section. */
function changedMembers(prev: Setting, next: Setting): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const section of ['meta', 'functions'] as const) {
    const a = (prev[section] ?? {}) as Record<string, unknown>;
    const b = (next[section] ?? {}) as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !sameValue(a[k], b[k]));
    if (keys.length > 0) out[section] = keys.sort();
  }
  return out;
}
