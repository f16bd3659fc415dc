// Where the history of a setting file lives, kept beside the file (`.svc-state`), so that a start
// whose setting.json is gone can still find the history and bring the newest setting back: the
// history directory is an env member of the very file that is missing.
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { HistoryStore } from './history.js';
import { SETTING_FILE, unpack } from './package.js';

export function pointerPath(settingPath: string): string {
  return path.join(path.dirname(settingPath), '.svc-state');
}

/** Records `stateDir` beside the setting file (only when it changed). */
export async function writeStatePointer(settingPath: string, stateDir: string): Promise<void> {
  const file = pointerPath(settingPath);
  const text = `${path.resolve(stateDir)}\n`;
  if ((await fs.readFile(file, 'utf8').catch(() => undefined)) === text) return;
  await writeFileAtomic(file, text);
}

/**
 * Before the setting is loaded: when setting.json is missing and the pointer names a history,
 * writes the setting.json of its newest package back. Resolves to that entry's hash, or
 * undefined when nothing was restored (the file exists, or there is no history to take it from).
 */
export async function restoreMissingSetting(settingPath: string): Promise<string | undefined> {
  if (await fs.access(settingPath).then(() => true, () => false)) return undefined;
  const stateDir = (await fs.readFile(pointerPath(settingPath), 'utf8').catch(() => ''))?.trim();
  if (stateDir === '' || !(await fs.access(path.join(stateDir, 'history.sqlite')).then(() => true, () => false))) return undefined;
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
