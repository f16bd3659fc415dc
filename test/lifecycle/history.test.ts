import fs from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { CERT, doc, get, host, KEY, makeTgz, postJson, postMultipart, startFixture, tgzNames, VERSION } from './fixtures/helpers.js';

interface Entry { id: number; 'conf-date': string; 'conf-time': string; type: string; size: number; hash: string; ver: string }
const historyOf = async (port: number): Promise<Entry[]> => (await get(port, '/setting/history')).json.history as Entry[];

t.test('the loaded setting is the first history entry, in the form of document 1', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const r = await get(f.port, '/setting/history');
  t.equal(r.status, 200);
  t.match(r.headers['content-type'], /application\/json/);
  const h = r.json.history as Entry[];
  t.equal(h.length, 1);
  t.match(h[0], { id: Number, type: 'loaded', ver: '1' });
  t.match(h[0]!['conf-date'], /^\d{4}-\d\d-\d\d$/);
  t.match(h[0]!['conf-time'], /^\d\d:\d\d:\d\d$/);
  t.match(h[0]!.hash, /^\d{8}_\d{6}_[0-9a-f]{32}$/);
  const pkg = path.join(f.stateDir, 'packages');
  const files = await fs.readdir(pkg);
  t.equal(files.length, 1);
  t.match(files[0], /^setting_\d{8}T\d{6}\.?\d*Z(-\d+)?\.tgz$/, 'the package is named setting_<compact ISO time>.tgz');
  t.equal(h[0]!.size, (await fs.stat(path.join(pkg, files[0]!))).size);
});

t.test('every applied setting adds an entry; applying the same file again adds none', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await postJson(f.port, '/setting/upload', doc({ port: f.port, hosting: [host('a.example.com', '10.0.0.4:80')] }));
  t.equal((await historyOf(f.port)).length, 2);
  await get(f.port, '/setting/deploy/local');
  t.equal((await historyOf(f.port)).length, 2, 'an unchanged file is already the newest entry');
});

t.test('deploy/backup stores the running setting as a new entry', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const r = await get(f.port, '/setting/deploy/backup');
  t.equal(r.status, 200);
  t.equal(r.json.status, 'OK');
  t.equal(r.json.method, '/setting/deploy/backup');
  const h = await historyOf(f.port);
  t.equal(h.length, 2);
  t.strictSame(r.json.result, h[1]);
  t.equal(h[0]!.hash.slice(-32), h[1]!.hash.slice(-32), 'same setting, same md5');
  t.not(h[0]!.hash, h[1]!.hash, 'hash ids stay unique');
});

t.test('download answers the loaded package with its linked files', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const d = doc({ port: f.port, hosting: [host('a.example.com', '10.0.0.1:80', { https: [{ cert: 'cert/a.pem', key: 'cert/a.key' }] })] });
  const pkg = await makeTgz({ 'setting.json': JSON.stringify(d), 'cert/a.pem': CERT, 'cert/a.key': KEY });
  t.equal((await postMultipart(f.port, '/setting/upload', [{ name: 'settingFile', filename: 'p.tgz', data: pkg }])).json.status, 'OK');
  const r = await get(f.port, '/setting/download');
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'application/x-compressed');
  t.strictSame(await tgzNames(r.body), ['cert/a.key', 'cert/a.pem', 'setting.json']);
});

t.test('download is 404 when the package file is gone and 500 without history', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const pkgDir = path.join(f.stateDir, 'packages');
  for (const n of await fs.readdir(pkgDir)) await fs.rm(path.join(pkgDir, n));
  const missing = await get(f.port, '/setting/download');
  t.equal(missing.status, 404);
  const db = await f.lc.history();
  await db.prune({ days: 0, count: 1, size: 0 });
  // An empty history: remove the one row the store always keeps, as an operator deleting it would.
  (db as unknown as { db: { exec(s: string): void } }).db.exec('DELETE FROM history');
  const none = await get(f.port, '/setting/download');
  t.equal(none.status, 500);
  t.equal(none.json.status, 'fail');
});

t.test('with meta.history.retention.count 0 the setting backup is disabled', async (t) => {
  const f = await startFixture({ meta: { history: { retention: { count: 0 } } } });
  t.teardown(f.close);
  t.equal((await get(f.port, '/setting/download')).status, 406);
  t.strictSame(await historyOf(f.port), []);
  const b = await get(f.port, '/setting/deploy/backup');
  t.equal(b.json.status, 'Fail');
  t.match(b.json.reason, /disabled/);
  t.equal((await postJson(f.port, '/setting/upload', doc({ port: f.port, meta: { history: { retention: { count: 0 } } }, hosting: [host('x.example.com')] }))).json.status, 'OK', 'deployment still works');
  t.strictSame(await fs.readdir(path.join(f.stateDir, 'packages')), []);
});

t.test('restore brings back a setting from the history and applies it like a deploy', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const first = (await historyOf(f.port))[0]!;
  const original = await fs.readFile(f.settingPath, 'utf8');
  await postJson(f.port, '/setting/upload', doc({ port: f.port, hosting: [host('other.example.com')] }));
  t.strictSame(f.lc.running().hosting.map((h) => h.name), ['other.example.com']);
  const r = await get(f.port, `/setting/restore/${first.hash}`);
  t.equal(r.status, 200);
  t.match(r.json, { version: VERSION, method: '/setting/restore', status: 'OK', result: 0 });
  t.strictSame(f.lc.running().hosting.map((h) => h.name), ['a.example.com', 'b.example.com']);
  t.equal(await fs.readFile(f.settingPath, 'utf8'), original, 'setting.json is the restored file');
  t.strictSame(f.rt.applied.at(-1)!.setting.hosting.map((h) => h.name), ['a.example.com', 'b.example.com']);
  const h = await historyOf(f.port);
  t.equal(h.length, 3, 'the restored setting is the newest entry');
  t.equal(h[2]!.hash.slice(-32), first.hash.slice(-32));
});

t.test('restore answers result 1 to 4 for each failure', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const unknown = await get(f.port, '/setting/restore/20200101_000000_00000000000000000000000000000000');
  t.match(unknown.json, { status: 'Fail', result: 1 });
  const store = await f.lc.history();
  const put = async (pkg: Buffer): Promise<string> => (await store.add(pkg, 'f'.repeat(32), '1')).hash;
  const broken = await put(Buffer.from('not a tgz'));
  t.match((await get(f.port, `/setting/restore/${broken}`)).json, { status: 'Fail', result: 2 });
  const syntax = await put(await makeTgz({ 'setting.json': '{"meta":' }));
  const s = (await get(f.port, `/setting/restore/${syntax}`)).json;
  t.match(s, { status: 'Fail', result: 3 });
  t.match(s.reason, /JSON/);
  const wrong = await put(await makeTgz({ 'setting.json': JSON.stringify({ hosting: [{ name: 1 }] }) }));
  const w = (await get(f.port, `/setting/restore/${wrong}`)).json;
  t.match(w, { status: 'Fail', result: 4 });
  t.match(w.reason, /hosting\[0\]\.name/);
  t.equal(f.rt.applied.length, 0);
});

t.test('retention by count deletes the oldest entries and their packages', async (t) => {
  const f = await startFixture({ meta: { history: { retention: { count: 3 } } } });
  t.teardown(f.close);
  for (let i = 0; i < 5; i++) {
    const r = await postJson(f.port, '/setting/upload', doc({ port: f.port, meta: { history: { retention: { count: 3 } } }, hosting: [host(`h${i}.example.com`)] }));
    t.equal(r.json.status, 'OK');
  }
  const h = await historyOf(f.port);
  t.equal(h.length, 3);
  t.strictSame(h.map((e) => e.id), [4, 5, 6], 'the newest three are kept');
  t.equal((await fs.readdir(path.join(f.stateDir, 'packages'))).length, 3, 'the packages of deleted entries are gone');
});

t.test('retention by size and by age keeps at least the newest entry', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const store = await f.lc.history();
  const loaded = store.list()[0]!;
  const old = Date.now() - 10 * 86_400_000;
  const a = await store.add(Buffer.alloc(600 * 1024), 'a'.repeat(32), '1', null, new Date(old));
  const b = await store.add(Buffer.alloc(600 * 1024), 'b'.repeat(32), '1', null, new Date(old + 1000));
  const c = await store.add(Buffer.alloc(10), 'c'.repeat(32), '1');
  t.strictSame((await store.prune({ days: 0, count: 100, size: 1 })).map((r) => r.id), [a.id, loaded.id], 'over 1 MB the oldest go');
  t.strictSame((await store.prune({ days: 5, count: 100, size: 0 })).map((r) => r.id), [b.id], 'older than 5 days goes');
  t.equal(store.list().length, 1);
  const d = await store.add(Buffer.alloc(2 * 1024 * 1024), 'd'.repeat(32), '1', null, new Date(old));
  t.strictSame(await store.prune({ days: 0, count: 100, size: 0 }), [], '0 days and 0 MB mean no limit');
  t.strictSame((await store.prune({ days: 1, count: 1, size: 1 })).map((r) => r.id), [c.id], 'the newest entry stays whatever its age and size');
  t.equal(store.newest()?.id, d.id);
});

t.test('recovery records a setting.json edited outside the service and brings back a lost one', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await fs.writeFile(f.settingPath, JSON.stringify(doc({ port: f.port, hosting: [host('edited.example.com')] })));
  const r = await f.lc.recover();
  t.equal(r.recorded, true, 'the file wins and is recorded');
  const h = await historyOf(f.port);
  t.equal(h.length, 2);
  const text = await fs.readFile(f.settingPath, 'utf8');
  await fs.rm(f.settingPath);
  const back = await f.lc.recover();
  t.equal(back.rewritten, true);
  t.equal(await fs.readFile(f.settingPath, 'utf8'), text, 'setting.json comes back from the newest package');
  await fs.writeFile(path.join(f.stateDir, 'packages', 'setting_19990101T000000.000Z.tgz'), 'orphan');
  t.strictSame((await f.lc.recover()).orphans, ['setting_19990101T000000.000Z.tgz'], 'a package without entry is removed');
});
