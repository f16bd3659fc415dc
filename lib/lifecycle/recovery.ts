// Recovery at start: makes setting.json, its linked files and the history agree again after a
// crash at any point of SettingLifecycle.commit. It only reads the lifecycle's state (the running
// setting does not change during recovery), so the lifecycle hands that state over and runs this
// inside its serial().
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Setting } from '../setting/types.js';
import { removeTempFiles, writeFileAtomic } from '../files/atomic.js';
import { loadCandidate, LoadFailure, type LoadOptions } from './candidate.js';
import type { GlobalLogs } from '../log/global/global-logs.js';
import { md5OfHash, sameContent, type HistoryRow, type HistoryStore } from './history.js';
import { removeLinkedTemps, stageLinked } from './install.js';
import { contentHash, md5, SETTING_FILE, unpack, unpackLimits, type LinkedRef } from './package.js';

interface RecoveryState {
  settingPath: string;
  /** Directory of setting.json, where crashed atomic writes leave temporary files. */
  baseDir: string;
  /** The lifecycle's temporary directory, emptied here. */
  workDir: string;
  /** The install journal a commit writes while linked files are not yet in place. */
  journalPath: string;
  history(): Promise<HistoryStore>;
  historyEnabled: boolean;
  running: Setting;
  runningRaw: string;
  events: GlobalLogs;
  loadOptions(checkFiles: boolean, staged?: string): LoadOptions;
  /** Stores `raw` and its linked files as a new history entry. */
  record(raw: string, refs: LinkedRef[], ver: string, content: string): Promise<HistoryRow>;
}

export interface Recovered {
  /** The setting on disk was not the newest history entry and was recorded. */
  recorded: boolean;
  /** setting.json was missing and was written again. */
  rewritten: boolean;
  /** Linked files a crash left half-installed were installed. */
  reinstalled: boolean;
  /** Package files without a history row, removed. */
  orphans: string[];
}

/**
 * Temporary files and unreferenced packages go, a missing setting.json comes back from the
 * newest package (or the running text), linked files a crash left half-installed are completed
 * from the package of the setting.json that was written (the install journal says which), and a
 * setting the newest entry does not match is recorded (the files on disk win).
 */
export async function reconcileAfterCrash(s: RecoveryState): Promise<Recovered> {
  await removeTempFiles(s.baseDir);
  await fs.rm(s.workDir, { recursive: true, force: true });
  const store = await s.history();
  const orphans = await store.removeOrphans();
  let text = await readText(s.settingPath);
  let rewritten = false;
  if (text === undefined) {
    const newest = store.newest();
    text = (newest === undefined ? undefined : await settingOf(s, newest)) ?? s.runningRaw;
    await writeFileAtomic(s.settingPath, text);
    rewritten = true;
  }
  const reinstalled = await completeInstall(s, text);
  let recorded = false;
  if (s.historyEnabled) {
    try {
      const c = await loadCandidate(text, s.loadOptions(false));
      await removeLinkedTemps(c.refs);
      const content = await contentHash(text, c.refs);
      if (!sameContent(store.newest(), text, content)) {
        await s.record(text, c.refs, c.setting.meta.version, content);
        recorded = true;
      }
    } catch (err) {
      if (!(err instanceof LoadFailure)) throw err;
      await s.events.info('setting.json on disk is not a valid setting; not recorded in the history', { reason: err.message });
    }
  }
  await store.prune(s.running.meta.history.retention);
  return { recorded, rewritten, reinstalled, orphans };
}

/**
 * A commit writes the journal (the history entry of the new package) before setting.json and
 * removes it once the linked files are in place. Found at start: when setting.json is that
 * entry's, its linked files are installed from the package; otherwise setting.json was never
 * written and the staged files were already removed.
 */
async function completeInstall(s: RecoveryState, text: string): Promise<boolean> {
  const journal = await readText(s.journalPath);
  if (journal === undefined) return false;
  let done = false;
  const row = (await s.history()).byHash(journal.trim());
  if (row !== undefined && md5OfHash(row.hash) === md5(text)) {
    let dir: string | undefined;
    try {
      dir = await unpack(await fs.readFile((await s.history()).packagePath(row)), s.workDir, unpackLimits(s.running));
      const c = await loadCandidate(undefined, s.loadOptions(false, dir));
      const staged = await stageLinked(c);
      await staged.commit();
      done = staged.targets.length > 0;
      await s.events.info('linked files of the last setting installed after a crash', { hash: row.hash, files: staged.targets });
    } catch (err) {
      await s.events.info('linked files of the last setting could not be installed after a crash', { hash: row.hash, reason: (err as Error).message });
    } finally {
      if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
    }
  }
  await fs.rm(s.journalPath, { force: true });
  return done;
}

/** The setting.json inside the package of `row`; undefined when it cannot be read. */
async function settingOf(s: RecoveryState, row: HistoryRow): Promise<string | undefined> {
  let dir: string | undefined;
  try {
    dir = await unpack(await fs.readFile((await s.history()).packagePath(row)), s.workDir, unpackLimits(s.running));
    return await fs.readFile(path.join(dir, SETTING_FILE), 'utf8');
  } catch {
    return undefined;
  } finally {
    if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
  }
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}
