// SettingLifecycle: the one owner of setting.json after start. It validates candidates (local
// file, upload, restore, virtual-host edits), applies them to the running service through
// RuntimeHooks, keeps env changes as the `artifact` until restart, stores every applied setting
// in the history, and writes the info and watch logs. Mutations run one at a time.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Setting } from '../setting/types.js';
import { removeTempFiles, writeFileAtomic } from './atomic.js';
import { loadCandidate, LoadFailure, stageMultipart, type Candidate } from './candidate.js';
import { ConfigEvents, WATCH } from './config-events.js';
import { hostChanges, sameValue, withoutHosting } from './diff.js';
import { HistoryStore, md5OfHash, sameContent, toEntry, type HistoryEntry, type HistoryRow } from './history.js';
import { removeLinkedTemps, stageLinked } from './install.js';
import { linkedFileDirs } from './linked-dirs.js';
import { writeStatePointer } from './state-pointer.js';
import { buildPackage, contentHash, md5, SETTING_FILE, unpack, unpackLimits, type LinkedRef } from './package.js';

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
}

export interface Applied {
  /** True when the env part waits for a restart (artifact()). */
  artifact: boolean;
  /** Hosts handed to the runtime. */
  changedHosts: string[] | 'all';
  /** The history entry made, when the history is on and the setting was new. */
  hash?: string;
}

export type PackageAnswer =
  | { kind: 'disabled' }
  | { kind: 'none' }
  | { kind: 'missing' }
  | { kind: 'ok'; file: string; data: Buffer };

const HOUR = 3_600_000;

export class SettingLifecycle {
  readonly events: ConfigEvents;
  readonly version: string;
  private current: Setting;
  private currentRaw: string;
  private pending: Setting | undefined;
  private store: Promise<HistoryStore> | undefined;
  private lock: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: SettingLifecycleOptions) {
    this.current = opts.running;
    this.currentRaw = opts.runningRaw;
    this.version = opts.version;
    // Log places are env members: fixed until the next start.
    this.events = new ConfigEvents(opts.running);
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
      if (this.store !== undefined) (await this.store).close();
      this.store = undefined;
    });
  }

  /**
   * Makes setting.json, its linked files and the history agree after a crash: temporary files
   * and unreferenced packages go, a missing setting.json comes back from the newest package (or
   * the running text), linked files a crash left half-installed are completed from the package
   * of the setting.json that was written (the install journal says which), and a setting the
   * newest entry does not match is recorded (the files on disk win).
   */
  recover(): Promise<{ recorded: boolean; rewritten: boolean; reinstalled: boolean; orphans: string[] }> {
    return this.serial(async () => {
      await removeTempFiles(this.opts.baseDir);
      await fs.rm(this.workDir, { recursive: true, force: true });
      const store = await this.history();
      const orphans = await store.removeOrphans();
      let text = await readText(this.opts.settingPath);
      let rewritten = false;
      if (text === undefined) {
        const newest = store.newest();
        text = (newest === undefined ? undefined : await this.settingOf(newest)) ?? this.currentRaw;
        await writeFileAtomic(this.opts.settingPath, text);
        rewritten = true;
      }
      const reinstalled = await this.completeInstall(text);
      let recorded = false;
      if (this.historyEnabled()) {
        try {
          const c = await loadCandidate(text, this.loadOptions(false));
          await removeLinkedTemps(c.refs);
          const content = await contentHash(text, c.refs);
          if (!sameContent(store.newest(), text, content)) {
            await this.record(text, c.refs, undefined, c.setting.meta.version, content);
            recorded = true;
          }
        } catch (err) {
          if (!(err instanceof LoadFailure)) throw err;
          await this.events.info('setting.json on disk is not a valid setting; not recorded in the history', { reason: err.message });
        }
      }
      await store.prune(this.current.meta.history.retention);
      return { recorded, rewritten, reinstalled, orphans };
    });
  }

  private get journalPath(): string {
    return path.join(this.opts.stateDir, 'install.pending');
  }

  /**
   * A commit writes the journal (the history entry of the new package) before setting.json and
   * removes it once the linked files are in place. Found at start: when setting.json is that
   * entry's, its linked files are installed from the package; otherwise setting.json was never
   * written and the staged files were already removed.
   */
  private async completeInstall(text: string): Promise<boolean> {
    const journal = await readText(this.journalPath);
    if (journal === undefined) return false;
    let done = false;
    const row = (await this.history()).byHash(journal.trim());
    if (row !== undefined && md5OfHash(row.hash) === md5(text)) {
      let dir: string | undefined;
      try {
        dir = await unpack(await fs.readFile((await this.history()).packagePath(row)), this.workDir, unpackLimits(this.current));
        const c = await loadCandidate(undefined, this.loadOptions(false, dir));
        const staged = await stageLinked(c);
        await staged.commit();
        done = staged.targets.length > 0;
        await this.events.info('linked files of the last setting installed after a crash', { hash: row.hash, files: staged.targets });
      } catch (err) {
        await this.events.info('linked files of the last setting could not be installed after a crash', { hash: row.hash, reason: (err as Error).message });
      } finally {
        if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
      }
    }
    await fs.rm(this.journalPath, { force: true });
    return done;
  }

  loadOptions(checkFiles: boolean, staged?: string): Parameters<typeof loadCandidate>[1] {
    const linkedDirs = linkedFileDirs(this.current.env);
    return { settingDir: this.opts.baseDir, runningHome: this.current.env.home, checkFiles, linkedDirs, ...(staged === undefined ? {} : { staged }) };
  }

  /** `GET /setting/deploy/local`: the edited setting.json on disk, applied. Throws LoadFailure. */
  deployLocal(): Promise<Applied> {
    return this.logRefusal('deploy/local', this.serial(async () => {
      const text = await readText(this.opts.settingPath);
      if (text === undefined) throw new LoadFailure(3, `cannot read ${this.opts.settingPath}`);
      const c = await loadCandidate(text, this.loadOptions(true));
      return this.commit(c, 'deploy/local');
    }));
  }

  /** Refused deployments go to the info log too, with the reason the caller gets. */
  private async logRefusal<T>(source: string, work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      if (err instanceof LoadFailure && !err.message.startsWith('not applied:')) {
        await this.events.info(`setting refused from ${source}`, { error: err.code, reason: err.message });
      }
      throw err;
    }
  }

  /**
   * `POST /setting/upload|import|validate` after the route checked the headers: a JSON body or a
   * multipart body. With `apply` false nothing changes and, for a JSON body, linked files are
   * not required to exist. Throws LoadFailure (codes 1-5).
   */
  upload(contentType: string, body: Buffer, apply: boolean): Promise<Applied> {
    const work = this.uploadOnce(contentType, body, apply);
    return apply ? this.logRefusal('upload', work) : work;
  }

  private async uploadOnce(contentType: string, body: Buffer, apply: boolean): Promise<Applied> {
    let staged: string | undefined;
    try {
      let text: string | undefined;
      if (/^multipart\/form-data/i.test(contentType)) {
        staged = await stageMultipart(body, contentType, this.current.env.management.api.multipartName, this.workDir, unpackLimits(this.current));
      } else {
        if (body.length === 0) throw new LoadFailure(1, 'empty body: no setting.json');
        text = body.toString('utf8');
      }
      const c = await loadCandidate(text, this.loadOptions(apply || staged !== undefined, staged));
      if (!apply) return { artifact: !sameValue(c.setting.env, this.current.env), changedHosts: [] };
      return await this.serial(() => this.commit(c, 'upload'));
    } finally {
      if (staged !== undefined) await fs.rm(topDir(this.workDir, staged), { recursive: true, force: true });
    }
  }

  /** `GET /setting/restore/<hash>`: result 0-4 of document 1. */
  async restore(hash: string): Promise<{ code: 0 | 1 | 2 | 3 | 4; reason: string | null; applied?: Applied }> {
    const row = (await this.history()).byHash(hash);
    if (row === undefined) return { code: 1, reason: `no setting package for ${hash}` };
    let staged: string | undefined;
    try {
      let pkg: Buffer;
      try {
        pkg = await fs.readFile((await this.history()).packagePath(row));
      } catch {
        return { code: 1, reason: `package file ${row.file} is missing` };
      }
      try {
        staged = await unpack(pkg, this.workDir, unpackLimits(this.current));
      } catch (err) {
        return { code: 2, reason: (err as Error).message };
      }
      const c = await loadCandidate(undefined, this.loadOptions(true, staged));
      const applied = await this.serial(() => this.commit(c, `restore ${hash}`));
      return { code: 0, reason: null, applied };
    } catch (err) {
      if (!(err instanceof LoadFailure)) throw err;
      // Restore has no code 5: a linked file missing from package and disk is wrong content.
      return { code: err.code === 3 ? 3 : err.code === 1 || err.code === 2 ? err.code : 4, reason: err.message };
    } finally {
      if (staged !== undefined) await fs.rm(staged, { recursive: true, force: true });
    }
  }

  /**
   * Applies a validated candidate. Order, so that a crash at any moment leaves the old or the new
   * setting whole: linked files staged beside their targets; runtime applied (a refusal discards
   * them and throws LoadFailure 4); package and history row; the install journal; setting.json
   * (the commit point); linked files renamed into place; journal removed; logs. Call inside serial().
   */
  async commit(c: Candidate, source: string): Promise<Applied> {
    const prev = this.current;
    const envChanged = !sameValue(c.setting.env, prev.env);
    const applied: Setting = envChanged ? { ...c.setting, env: prev.env } : c.setting;
    const changes = hostChanges(prev, applied);
    const changedHosts = applied.meta.setting.deploy === 'shared' ? changes.affected : 'all';
    const staged = await stageLinked(c);
    try {
      await this.opts.runtime.apply(applied, changedHosts);
    } catch (err) {
      await staged.discard();
      const reason = err instanceof Error ? err.message : String(err);
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
    await this.logChanges(prev, changes, source, { hash, changedHosts, artifact: envChanged });
    return { artifact: envChanged, changedHosts, ...(hash === undefined ? {} : { hash }) };
  }

  /** A package of `raw` with its linked files, and its history row. */
  private async record(raw: string, refs: LinkedRef[], staged: string | undefined, ver: string, content?: string): Promise<HistoryRow> {
    const pkg = await buildPackage(raw, refs, staged, this.workDir);
    return (await this.history()).add(pkg, md5(raw), ver, content ?? await contentHash(raw, refs, staged));
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

  private async settingOf(row: HistoryRow): Promise<string | undefined> {
    let dir: string | undefined;
    try {
      dir = await unpack(await fs.readFile((await this.history()).packagePath(row)), this.workDir, unpackLimits(this.current));
      return await fs.readFile(path.join(dir, SETTING_FILE), 'utf8');
    } catch {
      return undefined;
    } finally {
      if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
    }
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

async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The directory directly under `workDir` that holds `p`. */
function topDir(workDir: string, p: string): string {
  return path.join(workDir, path.relative(workDir, p).split(path.sep)[0]!);
}
