import fs from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { doc, get, host, startFixture, VERSION, watchLines } from './fixtures/helpers.js';

t.test('deploy/local applies the edited file to every host in exclusive mode', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await f.write(doc({ port: f.port, hosting: [host('a.example.com', '10.0.0.9:80'), host('b.example.com', '10.0.0.2:80')] }));
  const r = await get(f.port, '/setting/deploy/local');
  t.equal(r.status, 200);
  t.strictSame(r.json, {
    version: VERSION, method: '/setting/deploy/local', status: 'OK',
    result: { applied: true, artifact: false, restartPending: [], changedHosts: 'all' }, reason: null,
  });
  t.equal(f.rt.applied.length, 1);
  t.equal(f.rt.applied[0]!.changedHosts, 'all');
  t.strictSame(f.rt.applied[0]!.setting.hosting[0]!.origin?.address, ['10.0.0.9:80']);
  t.strictSame(f.lc.running().hosting[0]!.origin?.address, ['10.0.0.9:80'], 'the running setting is the new one');
});

t.test('deploy/local in shared mode hands only the changed hosts to the runtime', async (t) => {
  const f = await startFixture({ meta: { setting: { deploy: 'shared' } } });
  t.teardown(f.close);
  await f.write(doc({
    port: f.port,
    meta: { setting: { deploy: 'shared' } },
    hosting: [host('a.example.com'), host('b.example.com', '10.0.0.7:80'), host('c.example.com')],
  }));
  const r = await get(f.port, '/setting/deploy/local');
  t.equal(r.json.status, 'OK');
  t.strictSame(f.rt.applied[0]!.changedHosts, ['b.example.com', 'c.example.com']);

  await f.write(doc({ port: f.port, meta: { setting: { deploy: 'shared' } }, hosting: [host('a.example.com'), host('c.example.com')] }));
  await get(f.port, '/setting/deploy/local');
  t.strictSame(f.rt.applied[1]!.changedHosts, ['b.example.com'], 'a deleted host is a changed host');
});

t.test('deploy/local writes host added, changed and deleted events to the watch log', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await f.write(doc({ port: f.port, hosting: [host('a.example.com', '10.0.0.9:80'), host('c.example.com')] }));
  await get(f.port, '/setting/deploy/local');
  const lines = await watchLines(f);
  t.equal(lines[0]!.event, '00010001', 'the start event comes first');
  t.equal(lines[0]!.vhost, '-');
  t.notOk('hosting' in lines[0]!.body, 'the start event carries the setting without hosting[]');
  t.ok('env' in lines[0]!.body && 'meta' in lines[0]!.body);
  t.same(lines.filter((l) => l.event === '00020004').map((l) => l.vhost), ['a.example.com', 'b.example.com'], 'a first start records every host in full');
  const added = lines.find((l) => l.event === '00020001');
  t.equal(added?.vhost, 'c.example.com');
  t.equal(added?.body.name, 'c.example.com');
  t.strictSame(lines.find((l) => l.event === '00020002')?.body, { name: 'b.example.com' });
  const changed = lines.find((l) => l.event === '00020003');
  t.equal(changed?.vhost, 'a.example.com');
  t.strictSame(changed?.body, { name: 'a.example.com', origin: { address: ['10.0.0.9:80'], _asis_address: ['10.0.0.1:80'] } });
  const info = await fs.readFile(path.join(f.dir, 'svclog', 'info.log'), 'utf8');
  t.match(info, /setting applied from deploy\/local .*"changed":\["a.example.com"\]/);
});

t.test('the stop event is written when the lifecycle closes', async (t) => {
  const f = await startFixture();
  await f.api.close();
  await f.lc.close();
  const lines = await watchLines(f);
  t.equal(lines.at(-1)!.event, '00010002');
  t.strictSame(lines.at(-1)!.body, {});
  await fs.rm(f.dir, { recursive: true, force: true });
});

t.test('a change under env is kept as the artifact and the running env stays', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const d = doc({ port: f.port, env: { cache: { memorySize: '64mb' } }, hosting: [host('a.example.com', '10.0.0.5:80')] });
  await f.write(d);
  const r = await get(f.port, '/setting/deploy/local');
  t.equal(r.json.status, 'OK');
  t.equal((r.json.result as { artifact: boolean }).artifact, true);
  t.strictSame((r.json.result as { restartPending: string[] }).restartPending, ['env.cache.memorySize'], 'named as waiting for a restart, not as applied');
  const applied = f.rt.applied[0]!.setting;
  t.equal(applied.env.cache.memorySize, f.lc.running().env.cache.memorySize);
  t.not(applied.env.cache.memorySize, '64mb', 'the runtime never sees the new env');
  t.strictSame(applied.hosting.map((h) => h.name), ['a.example.com'], 'everything else is applied');
  t.equal(f.lc.artifact()?.env.cache.memorySize, '64mb', 'artifact() gives the setting waiting for a restart');
  t.match(await fs.readFile(f.settingPath, 'utf8'), /64mb/, 'the file keeps the new env');

  await f.write(doc({ port: f.port, hosting: [host('a.example.com')] }));
  const back = await get(f.port, '/setting/deploy/local');
  t.equal((back.json.result as { artifact: boolean }).artifact, false);
  t.equal(f.lc.artifact(), undefined, 'a file with the running env clears the artifact');
});

t.test('a bad local file is refused with Fail and the JSON path, and nothing is applied', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await f.write(doc({ port: f.port, hosting: [{ name: 'a.example.com', listen: 12 }] }));
  const r = await get(f.port, '/setting/deploy/local');
  t.equal(r.status, 200);
  t.equal(r.json.status, 'Fail');
  t.match(r.json.reason, /hosting\[0\]\.listen/);
  t.match(r.json.issues, [{ path: 'hosting[0].listen', message: /^must be / }], 'each refused member at its JSON path');
  t.equal(f.rt.applied.length, 0);
  await fs.writeFile(f.settingPath, '{ "meta": ');
  const syntax = await get(f.port, '/setting/deploy/local');
  t.equal(syntax.json.status, 'Fail');
  t.match(syntax.json.reason, /not valid JSON/);
});

t.test('a runtime that refuses the setting gives Fail and keeps the running setting', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  f.rt.refuse = 'worker 1 could not bind *:8080';
  await f.write(doc({ port: f.port, hosting: [host('a.example.com', '10.0.0.9:80')] }));
  const r = await get(f.port, '/setting/deploy/local');
  t.equal(r.json.status, 'Fail');
  t.match(r.json.reason, /worker 1 could not bind/);
  t.strictSame(f.lc.running().hosting.map((h) => h.name), ['a.example.com', 'b.example.com']);
});

t.test('GET /setting/setting.json answers the running setting, whatever happens to the file on disk', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const running = await fs.readFile(f.settingPath, 'utf8');
  const r = await get(f.port, '/setting/setting.json');
  t.equal(r.status, 200);
  t.match(r.headers['content-type'], /application\/json/);
  t.equal(r.body.toString(), running);
  await f.write(doc({ port: f.port, hosting: [host('edited.example.com')] }));
  t.equal((await get(f.port, '/setting/setting.json')).body.toString(), running, 'a local edit not deployed is not the running setting');
  await fs.rm(f.settingPath);
  const gone = await get(f.port, '/setting/setting.json');
  t.equal(gone.status, 200, 'the running setting is still there when the file is gone');
  t.equal(gone.body.toString(), running);
});

t.test('each host is recorded in full again once the fullsync period has passed', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  t.strictSame(await f.lc.fullsync(), [], 'within the period nothing is written');
  const later = Date.now() + 31 * 86_400_000;
  t.strictSame(await f.lc.fullsync(later), ['a.example.com', 'b.example.com']);
  const lines = (await watchLines(f)).filter((l) => l.event === '00020004');
  t.equal(lines.length, 4, 'two at start, two after 30 days');
  t.equal(lines.at(-1)!.body.name, 'b.example.com');
  t.ok('origin' in lines.at(-1)!.body, 'the body is the whole hosting[] entry');
});

t.test('refused deployments are written to the info log', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await f.write(doc({ port: f.port, hosting: [{ name: 'a.example.com', listen: 12 }] }));
  await get(f.port, '/setting/deploy/local');
  await f.lc.events.flush();
  t.match(await fs.readFile(path.join(f.dir, 'svclog', 'info.log'), 'utf8'), /setting refused from deploy\/local .*hosting\[0\]\.listen/);
});
