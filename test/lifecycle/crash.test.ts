import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import * as tar from 'tar';
import { SettingLifecycle } from '../../lib/lifecycle/index.js';
import { loadSettingFile } from '../../lib/setting-check/load.js';
import { createHash } from 'node:crypto';
import { doc, fakeRuntime, tmpDir } from './fixtures/helpers.js';

const loader = process.execArgv.filter((a) => a.includes('typescript') || a === '--enable-source-maps');
const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url));
const md5 = (b: Buffer | string): string => createHash('md5').update(b).digest('hex');

/** Runs the child until it is ready, lets it work for `ms`, then SIGKILLs it. */
function runAndKill(args: string[], ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [...loader, child, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    c.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) setTimeout(() => c.kill('SIGKILL'), ms);
    });
    const guard = setTimeout(() => c.kill('SIGKILL'), 60_000);
    c.once('error', reject);
    c.once('close', (_code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`child ended by itself: ${err}`));
      else resolve(err);
    });
  });
}

async function settingInPackage(file: string): Promise<string> {
  let text = '';
  await tar.t({ file, onReadEntry: (e) => {
    if (e.path === 'setting.json') e.on('data', (c: Buffer) => { text += c.toString(); });
    else e.resume();
  } });
  return text;
}

t.test('a process killed at random moments while applying settings leaves a consistent file and history', async (t) => {
  const dir = await tmpDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const settingPath = path.join(dir, 'setting.json');
  const stateDir = path.join(dir, 'state');
  await fs.writeFile(settingPath, JSON.stringify(doc({ port: 10040, meta: { history: { retention: { count: 4 } } } })));
  for (let round = 0; round < 6; round++) {
    const ms = 20 + Math.floor(Math.random() * 400);
    await runAndKill([settingPath, stateDir, dir, '10040'], ms);

    const loaded = await loadSettingFile(settingPath);
    t.ok(loaded.setting.hosting.length > 0, `round ${round} (killed after ${ms} ms): setting.json is a valid setting`);
    const lc = new SettingLifecycle({
      settingPath, stateDir, baseDir: dir, running: loaded.setting, runningRaw: loaded.raw, runtime: fakeRuntime(), version: 'crash',
    });
    await lc.recover();
    const store = await lc.history();
    const rows = store.list();
    t.ok(rows.length >= 1 && rows.length <= 4, `round ${round}: retention holds (${rows.length} entries)`);
    for (const r of rows) {
      const file = store.packagePath(r);
      const text = await settingInPackage(file);
      t.equal(md5(text), r.hash.slice(-32), `round ${round}: entry ${r.id} has its package with the setting its hash names`);
    }
    t.equal(rows.at(-1)!.hash.slice(-32), md5(await fs.readFile(settingPath)), `round ${round}: the newest entry is setting.json`);
    const packages = (await fs.readdir(store.packagesDir)).sort();
    t.strictSame(packages, rows.map((r) => r.file).sort(), `round ${round}: no package without an entry, no temp file`);
    t.strictSame((await fs.readdir(dir)).filter((n) => n.startsWith('.tmp-')), [], `round ${round}: no temp file beside setting.json`);
    const again = await lc.recover();
    t.strictSame(again, { recorded: false, rewritten: false, reinstalled: false, orphans: [] }, `round ${round}: a second recovery finds nothing to do`);
    await lc.close();
  }
});
