// Where the history of a setting file lives, so that a start whose setting.json is gone can still
// find the history and bring the newest setting back: the history directory is under env.home,
// an env member of the very file that is missing.
//
// The state directory records the setting file it belongs to (`<env.home>/state/setting-path`).
// Without the file, env.home is looked for where it usually is: the setting file's directory
// (home "."), a directory right under it (home "./var", as in setting.json.example) and the
// default home; a state directory counts only if it names this setting file. Only a home none of
// these finds gets a pointer beside the setting file (`.svc-state`, the absolute state directory),
// as every home did before; such a pointer is still read first, and removed at the next start
// whose home the search finds.
import fs from 'node:fs/promises';
import path from 'node:path';
import { EnvSchema } from '../setting/schema/env.js';
import { writeFileAtomic } from '../files/atomic.js';
import { HistoryStore } from './history.js';
import { SETTING_FILE, unpack } from './package.js';

const OWNER_FILE = 'setting-path';
const DEFAULT_HOME = String((EnvSchema.properties.home as { default?: unknown }).default);

function pointerPath(settingPath: string): string {
  return path.join(path.dirname(settingPath), '.svc-state');
}

/** Homes a lost setting file may have had, looked at in this order. */
async function likelyHomes(settingPath: string): Promise<string[]> {
  const dir = path.dirname(path.resolve(settingPath));
  const below = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return [dir, ...below.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name)), path.resolve(DEFAULT_HOME)];
}

/** Records the setting file in its state directory; a pointer beside the file only when needed. */
export async function writeStatePointer(settingPath: string, stateDir: string): Promise<void> {
  const owner = `${path.resolve(settingPath)}\n`;
  const state = path.resolve(stateDir);
  const ownerFile = path.join(state, OWNER_FILE);
  if ((await fs.readFile(ownerFile, 'utf8').catch(() => undefined)) !== owner) {
    await fs.mkdir(state, { recursive: true });
    await writeFileAtomic(ownerFile, owner);
  }
  const file = pointerPath(settingPath);
  const text = `${state}\n`;
  const found = path.basename(state) === 'state' && (await likelyHomes(settingPath)).includes(path.dirname(state));
  const beside = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (found) {
    // The search finds this state directory: a pointer of an earlier start would only mislead.
    if (beside !== undefined) await fs.rm(file, { force: true });
    return;
  }
  if (beside !== text) await writeFileAtomic(file, text);
}

const exists = (p: string): Promise<boolean> => fs.access(p).then(() => true, () => false);

/** The state directory holding the history of the setting file, if one can be found. */
async function findStateDir(settingPath: string): Promise<string | undefined> {
  const pointed = (await fs.readFile(pointerPath(settingPath), 'utf8').catch(() => ''))?.trim();
  if (pointed !== '' && await exists(path.join(pointed, 'history.sqlite'))) return pointed;
  const owner = path.resolve(settingPath);
  for (const home of await likelyHomes(settingPath)) {
    const state = path.join(home, 'state');
    const named = (await fs.readFile(path.join(state, OWNER_FILE), 'utf8').catch(() => ''))?.trim();
    if (named === owner && await exists(path.join(state, 'history.sqlite'))) return state;
  }
  return undefined;
}

/**
 * Before the setting is loaded: when setting.json is missing and its history can be found,
 * writes the setting.json of its newest package back. Resolves to that entry's hash, or
 * undefined when nothing was restored (the file exists, or there is no history to take it from).
 */
export async function restoreMissingSetting(settingPath: string): Promise<string | undefined> {
  if (await exists(settingPath)) return undefined;
  const stateDir = await findStateDir(settingPath);
  if (stateDir === undefined) return undefined;
  const store = await HistoryStore.open(stateDir);
  let dir: string | undefined;
  try {
    const row = store.newest();
    if (row === undefined) return undefined;
    // No setting is loaded yet, so its upload limits are not known: the defaults bound this one.
    dir = await unpack(await fs.readFile(store.packagePath(row)), path.join(stateDir, 'tmp'));
    await writeFileAtomic(settingPath, await fs.readFile(path.join(dir, SETTING_FILE)));
    return row.hash;
  } finally {
    store.close();
    if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
  }
}
