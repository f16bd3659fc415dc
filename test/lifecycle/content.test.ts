// History newness by package content, the install journal that completes linked files after a
// crash, a missing setting.json restored before the load, retention by age on a history read,
// multipart without setting.json, and the info log naming changed global members.
import fs from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { restoreMissingSetting, SettingLifecycle } from '../../lib/lifecycle/index.js';
import { md5 } from '../../lib/lifecycle/package.js';
import { loadSettingFile } from '../../lib/setting-check/load.js';
import { resolvePath } from '../../lib/setting/resolve.js';
import { CERT, RENEWED, doc, fakeRuntime, get, host, KEY, postMultipart, startFixture, tgzNames, tmpDir } from './fixtures/helpers.js';

type Tap = { teardown(fn: () => unknown): void };

const withCert = (port: number, meta: Record<string, unknown> = {}): Record<string, unknown> => doc({
  port, meta,
  hosting: [host('a.example.com', '10.0.0.1:80', { https: [{ cert: 'cert/a.pem', key: 'cert/a.key' }] })],
});

async function historyOf(port: number): Promise<Array<{ hash: string }>> {
  return (await get(port, '/setting/history')).json.history as Array<{ hash: string }>;
}

t.test('a changed certificate alone makes a new history entry; the hash id keeps the md5 of setting.json', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await fs.mkdir(path.join(f.dir, 'cert'), { recursive: true });
  await fs.writeFile(path.join(f.dir, 'cert/a.pem'), CERT);
  await fs.writeFile(path.join(f.dir, 'cert/a.key'), KEY);
  await f.write(withCert(f.port));
  t.equal((await get(f.port, '/setting/deploy/local')).json.status, 'OK');
  const before = await historyOf(f.port);
  t.equal((await get(f.port, '/setting/deploy/local')).json.status, 'OK');
  t.equal((await historyOf(f.port)).length, before.length, 'the same package again: no new entry');

  const renewed = RENEWED;
  const r = await postMultipart(f.port, '/setting/upload', [
    { name: 'settingFile', filename: 'setting.json', data: await fs.readFile(f.settingPath) },
    { name: 'settingFile', filename: 'a.pem', data: renewed },
  ]);
  t.equal(r.json.status, 'OK', JSON.stringify(r.json));
  const after = await historyOf(f.port);
  t.equal(after.length, before.length + 1, 'only the certificate changed, and that is a new entry');
  t.equal(after.at(-1)!.hash.slice(-32), md5(await fs.readFile(f.settingPath)), 'the hash id names setting.json');
  t.equal(await fs.readFile(path.join(f.dir, 'cert/a.pem'), 'utf8'), renewed);
  const pkg = await get(f.port, '/setting/download');
  t.strictSame(await tgzNames(pkg.body), ['cert/a.key', 'cert/a.pem', 'setting.json']);
  t.strictSame((await fs.readdir(path.join(f.dir, 'cert'))).sort(), ['a.key', 'a.pem'], 'no staged temporary file is left');
});

t.test('an install journal left by a crash installs the linked files of the written setting from its package', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const renewed = RENEWED;
  const r = await postMultipart(f.port, '/setting/upload', [
    { name: 'settingFile', filename: 'setting.json', data: JSON.stringify(withCert(f.port)) },
    { name: 'settingFile', filename: 'a.pem', data: renewed },
    { name: 'settingFile', filename: 'a.key', data: KEY },
  ]);
  t.equal(r.json.status, 'OK', JSON.stringify(r.json));
  const newest = (await historyOf(f.port)).at(-1)!;
  // The crash: setting.json was written, the certificate rename never happened.
  await fs.writeFile(path.join(f.dir, 'cert/a.pem'), CERT);
  await fs.writeFile(path.join(f.dir, 'cert/.tmp-a.pem.123456'), renewed);
  await fs.writeFile(path.join(f.stateDir, 'install.pending'), `${newest.hash}\n`);
  const loaded = await loadSettingFile(f.settingPath);
  const lc = new SettingLifecycle({ settingPath: f.settingPath, stateDir: f.stateDir, running: loaded.setting, runningRaw: loaded.raw, baseDir: f.dir, runtime: fakeRuntime(), version: 'x' });
  t.teardown(() => lc.close());
  const rec = await lc.recover();
  t.equal(rec.reinstalled, true);
  t.equal(rec.recorded, false, 'setting.json and its files are the newest entry again');
  t.equal(await fs.readFile(path.join(f.dir, 'cert/a.pem'), 'utf8'), renewed, 'the certificate of the written setting is in place');
  t.strictSame((await fs.readdir(path.join(f.dir, 'cert'))).sort(), ['a.key', 'a.pem'], 'the leftover temporary file is gone');
  await t.rejects(fs.access(path.join(f.stateDir, 'install.pending')), 'the journal is removed');
});

t.test('a journal whose setting.json was never written changes nothing', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  // The crash came before setting.json was written: the journal names an entry it is not.
  await fs.writeFile(path.join(f.stateDir, 'install.pending'), `20260101_000000_${'0'.repeat(32)}\n`);
  const loaded = await loadSettingFile(f.settingPath);
  const lc = new SettingLifecycle({ settingPath: f.settingPath, stateDir: f.stateDir, running: loaded.setting, runningRaw: loaded.raw, baseDir: f.dir, runtime: fakeRuntime(), version: 'x' });
  t.teardown(() => lc.close());
  t.strictSame(await lc.recover(), { recorded: false, rewritten: false, reinstalled: false, orphans: [] });
});

t.test('a missing setting.json is restored from the newest history package before the load', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const running = await fs.readFile(f.settingPath, 'utf8');
  const newest = (await historyOf(f.port)).at(-1)!;
  t.equal(await restoreMissingSetting(f.settingPath), undefined, 'nothing to do while the file is there');
  await fs.rm(f.settingPath);
  t.equal(await restoreMissingSetting(f.settingPath), newest.hash);
  t.equal(await fs.readFile(f.settingPath, 'utf8'), running);
  const elsewhere = path.join(f.dir, 'other', 'setting.json');
  t.equal(await restoreMissingSetting(elsewhere), undefined, 'no pointer to a history: nothing restored');
});

/** A setting file in a directory of its own, with the given env.home, and its started lifecycle. */
async function nodeWithHome(t: Tap, home: string, dir?: string): Promise<{ dir: string; settingPath: string; stateDir: string; lc: SettingLifecycle }> {
  const at = dir ?? await tmpDir();
  if (dir === undefined) t.teardown(() => fs.rm(at, { recursive: true, force: true }));
  const settingPath = path.join(at, 'setting.json');
  if (dir === undefined) await fs.writeFile(settingPath, JSON.stringify(doc({ port: 1, env: { home } }), null, 2));
  const loaded = await loadSettingFile(settingPath);
  const stateDir = resolvePath(loaded.setting, 'state');
  const lc = new SettingLifecycle({ settingPath, stateDir, running: loaded.setting, runningRaw: loaded.raw, baseDir: at, runtime: fakeRuntime(), version: 'x' });
  await lc.start();
  t.teardown(() => lc.close());
  return { dir: at, settingPath, stateDir, lc };
}

t.test('with env.home under the setting file\'s directory a start writes nothing beside the file, and a lost file is restored', async (t) => {
  const n = await nodeWithHome(t, './var');
  t.equal(n.stateDir, path.join(n.dir, 'var', 'state'));
  t.same((await fs.readdir(n.dir)).sort(), ['setting.json', 'var'], 'no .svc-state beside setting.json');
  const text = await fs.readFile(n.settingPath, 'utf8');
  await fs.rm(n.settingPath);
  t.match(await restoreMissingSetting(n.settingPath), /^\d{8}_\d{6}_[0-9a-f]{32}$/);
  t.equal(await fs.readFile(n.settingPath, 'utf8'), text);
});

t.test('a .svc-state beside the setting file from an earlier version is still read, and the next start removes it', async (t) => {
  const n = await nodeWithHome(t, './var');
  // As an earlier version left it: the pointer beside the file, the state directory unaware of it.
  await fs.rm(path.join(n.stateDir, 'setting-path'));
  await fs.writeFile(path.join(n.dir, '.svc-state'), `${n.stateDir}\n`);
  const text = await fs.readFile(n.settingPath, 'utf8');
  await fs.rm(n.settingPath);
  t.ok(await restoreMissingSetting(n.settingPath), 'restored through the old pointer');
  t.equal(await fs.readFile(n.settingPath, 'utf8'), text);
  await n.lc.close();
  await nodeWithHome(t, './var', n.dir);
  await t.rejects(fs.access(path.join(n.dir, '.svc-state')), 'the old pointer is gone');
  await fs.rm(n.settingPath);
  t.ok(await restoreMissingSetting(n.settingPath), 'and the history is still found');
});

t.test('a home elsewhere keeps a pointer beside the setting file, so a lost file is still restored', async (t) => {
  const home = await tmpDir();
  t.teardown(() => fs.rm(home, { recursive: true, force: true }));
  const n = await nodeWithHome(t, home);
  t.equal(await fs.readFile(path.join(n.dir, '.svc-state'), 'utf8'), `${path.join(home, 'state')}\n`);
  await fs.rm(n.settingPath);
  t.ok(await restoreMissingSetting(n.settingPath));
});

t.test('retention by age applies when the history is read, without any deployment', async (t) => {
  const f = await startFixture({ meta: { history: { retention: { days: 1 } } } });
  t.teardown(f.close);
  await f.write(doc({ port: f.port, meta: { history: { retention: { days: 1 } } }, hosting: [host('a.example.com', '10.0.0.7:80')] }));
  t.equal((await get(f.port, '/setting/deploy/local')).json.status, 'OK');
  t.equal((await historyOf(f.port)).length, 2);
  // The first entry ages by three days.
  const db = new Database(path.join(f.stateDir, 'history.sqlite'));
  db.prepare('UPDATE history SET created_ms = created_ms - ? WHERE id = (SELECT MIN(id) FROM history)').run(3 * 86_400_000);
  db.close();
  const left = await historyOf(f.port);
  t.equal(left.length, 1, 'the entry older than retention.days is gone at the read');
  t.equal((await fs.readdir(path.join(f.stateDir, 'packages'))).length, 1, 'with its package');
});

t.test('several multipart files without setting.json among them are error 1', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const r = await postMultipart(f.port, '/setting/upload', [
    { name: 'settingFile', filename: 'a.pem', data: CERT },
    { name: 'settingFile', filename: 'a.key', data: KEY },
  ]);
  t.equal(r.status, 500);
  t.equal(r.json.error, 1);
  t.match(r.json.reason, /no setting\.json among the 2 files/);
});

t.test('the info log names changed members of meta and functions', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const d = doc({ port: f.port, meta: { history: { retention: { count: 50 } } } });
  (d as Record<string, unknown>).functions = { network: { http: { frontEnd: { keepAliveTimeout: 30 } } } };
  await f.write(d);
  t.equal((await get(f.port, '/setting/deploy/local')).json.status, 'OK');
  await f.lc.events.flush();
  const info = await fs.readFile(path.join(f.dir, 'svclog', 'info.log'), 'utf8');
  t.match(info, /setting applied from deploy\/local .*"globals":\{"meta":\["history"\],"functions":\["network"\]\}/);
});
