// The deployments that bring a whole setting (virtual-host edits are vhosts.ts): the edited
// setting.json on disk (deploy/local), an uploaded body (upload, import, validate) and a history
// package (restore). Each turns its input into a validated candidate and hands it to
// SettingLifecycle.commit inside serial(); what it unpacks goes under the lifecycle's work
// directory and is removed whatever the outcome.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { GlobalLogs } from '../log/global/global-logs.js';
import type { Setting } from '../setting/types.js';
import { loadCandidate, LoadFailure, stageMultipart, type Candidate, type LoadOptions } from './candidate.js';
import { changedPaths, withLiveEnv } from './diff.js';
import type { HistoryStore } from './history.js';
import { unpack, unpackLimits } from './package.js';
import { settingWarnings } from '../setting-check/warnings.js';

/** What a deployment did. */
export interface Applied {
  /** True when the env part waits for a restart (artifact()). */
  artifact: boolean;
  /** The JSON paths under `env` that differ from the running env: applied at the next restart. */
  restartPending: string[];
  /** Hosts handed to the runtime. */
  changedHosts: string[] | 'all';
  /** The history entry made, when the history is on and the setting was new. */
  hash?: string;
  /** What the setting does that is likely not meant (lib/setting-check/warnings.ts); logged too. */
  warnings?: string[];
}

/**
 * What a deployment needs of the lifecycle (SettingLifecycle is one): named here, so that this
 * file and lifecycle.ts, which calls it, do not import each other.
 */
interface Deployer {
  readonly settingPath: string;
  readonly events: GlobalLogs;
  running(): Setting;
  loadOptions(checkFiles: boolean, staged?: string): LoadOptions;
  serial<T>(fn: () => Promise<T>): Promise<T>;
  commit(c: Candidate, source: string): Promise<Applied>;
  history(): Promise<HistoryStore>;
}

export function deployLocalFile(lc: Deployer, source: string): Promise<Applied> {
  return logRefusal(lc, source, lc.serial(async () => {
    const text = await fs.readFile(lc.settingPath, 'utf8').catch(() => undefined);
    if (text === undefined) throw new LoadFailure(3, `cannot read ${lc.settingPath}`);
    const c = await loadCandidate(text, lc.loadOptions(true));
    return lc.commit(c, source);
  }));
}

/** Refused deployments go to the info log too, with the reason the caller gets. */
async function logRefusal<T>(lc: Deployer, source: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof LoadFailure && !err.message.startsWith('not applied:')) {
      lc.events.error({ code: '1001', detail: `from ${source}: ${err.message}` });
      await lc.events.info(`setting refused from ${source}`, { error: err.code, reason: err.message });
    }
    throw err;
  }
}

export function uploadBody(lc: Deployer, workDir: string, contentType: string, body: Buffer, apply: boolean): Promise<Applied> {
  const work = uploadOnce(lc, workDir, contentType, body, apply);
  // Only deployments are logged: a validation changes nothing.
  return apply ? logRefusal(lc, 'upload', work) : work;
}

async function uploadOnce(lc: Deployer, workDir: string, contentType: string, body: Buffer, apply: boolean): Promise<Applied> {
  let staged: string | undefined;
  try {
    let text: string | undefined;
    if (/^multipart\/form-data/i.test(contentType)) {
      staged = await stageMultipart(body, contentType, lc.running().env.management.api.multipartName, workDir, unpackLimits(lc.running()));
    } else {
      if (body.length === 0) throw new LoadFailure(1, 'empty body: no setting.json');
      text = body.toString('utf8');
    }
    const c = await loadCandidate(text, lc.loadOptions(apply || staged !== undefined, staged));
    if (!apply) {
      const warnings = settingWarnings(c.setting, c.raw);
      const restartPending = changedPaths(withLiveEnv(lc.running().env, c.setting.env), c.setting.env, 'env');
      return { artifact: restartPending.length > 0, restartPending, changedHosts: [], ...(warnings.length === 0 ? {} : { warnings }) };
    }
    return await lc.serial(() => lc.commit(c, 'upload'));
  } finally {
    if (staged !== undefined) await fs.rm(topDir(workDir, staged), { recursive: true, force: true });
  }
}

/** The directory directly under `workDir` that holds `p`. */
function topDir(workDir: string, p: string): string {
  return path.join(workDir, path.relative(workDir, p).split(path.sep)[0]!);
}

/**
 * A setting package from the central server (a feed, lib/primary/central): a tgz package
 * (gzip magic) or a setting.json, applied exactly as an upload of it. Throws LoadFailure.
 */
export function packageBody(lc: Deployer, workDir: string, body: Buffer, source: string): Promise<Applied> {
  return logRefusal(lc, source, (async () => {
    let staged: string | undefined;
    try {
      let text: string | undefined;
      if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) {
        try {
          staged = await unpack(body, workDir, unpackLimits(lc.running()));
        } catch (err) {
          throw new LoadFailure(2, `bad setting package: ${(err as Error).message}`);
        }
      } else {
        if (body.length === 0) throw new LoadFailure(1, 'empty package: no setting.json');
        text = body.toString('utf8');
      }
      const c = await loadCandidate(text, lc.loadOptions(true, staged));
      return await lc.serial(() => lc.commit(c, source));
    } finally {
      if (staged !== undefined) await fs.rm(staged, { recursive: true, force: true });
    }
  })());
}

export type RestoreResult = { code: 0 | 1 | 2 | 3 | 4; reason: string | null; applied?: Applied };

export async function restorePackage(lc: Deployer, workDir: string, hash: string): Promise<RestoreResult> {
  const row = (await lc.history()).byHash(hash);
  if (row === undefined) return { code: 1, reason: `no setting package for ${hash}` };
  let staged: string | undefined;
  try {
    let pkg: Buffer;
    try {
      pkg = await fs.readFile((await lc.history()).packagePath(row));
    } catch {
      return { code: 1, reason: `package file ${row.file} is missing` };
    }
    try {
      staged = await unpack(pkg, workDir, unpackLimits(lc.running()));
    } catch (err) {
      return { code: 2, reason: (err as Error).message };
    }
    const c = await loadCandidate(undefined, lc.loadOptions(true, staged));
    const applied = await lc.serial(() => lc.commit(c, `restore ${hash}`));
    return { code: 0, reason: null, applied };
  } catch (err) {
    if (!(err instanceof LoadFailure)) throw err;
    // Restore has no code 5: a linked file missing from package and disk is wrong content.
    return { code: err.code === 3 ? 3 : err.code === 1 || err.code === 2 ? err.code : 4, reason: err.message };
  } finally {
    if (staged !== undefined) await fs.rm(staged, { recursive: true, force: true });
  }
}
