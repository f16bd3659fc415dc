import fs from 'node:fs/promises';
import t from 'tap';
import { get, host, postJson, request, startFixture, VERSION, watchLines } from './fixtures/helpers.js';

const fileHosts = async (p: string): Promise<string[]> =>
  (JSON.parse(await fs.readFile(p, 'utf8')) as { hosting: Array<{ name: string }> }).hosting.map((h) => h.name);

t.test('a virtual host is created, read, edited and deleted through /setting/vhosts', async (t) => {
  const f = await startFixture({ meta: { setting: { deploy: 'shared' } } });
  t.teardown(f.close);
  const created = await postJson(f.port, '/setting/vhosts', host('c.example.com', '10.0.0.3:80'));
  t.equal(created.status, 200);
  t.strictSame(created.json, { version: VERSION, method: '/setting/vhosts/create', status: 'OK', result: 'created', reason: null });
  t.strictSame(await fileHosts(f.settingPath), ['a.example.com', 'b.example.com', 'c.example.com'], 'setting.json is rewritten');
  t.strictSame(f.rt.applied[0]!.changedHosts, ['c.example.com'], 'shared: only that host is applied');

  const read = await get(f.port, '/setting/vhosts/c.example.com');
  t.equal(read.status, 200);
  t.strictSame(read.json, { version: VERSION, method: '/setting/vhosts/get', status: 'OK', result: host('c.example.com', '10.0.0.3:80'), reason: null });

  const edited = await postJson(f.port, '/setting/vhosts/c.example.com', { origin: { address: ['10.0.0.33:80'] }, listen: '*:8080' }, 'PUT');
  t.strictSame(edited.json, { version: VERSION, method: '/setting/vhosts/edit', status: 'OK', result: 'edited', reason: null });
  t.strictSame(f.lc.running().hosting.find((h) => h.name === 'c.example.com')?.origin?.address, ['10.0.0.33:80']);
  t.strictSame(f.rt.applied[1]!.changedHosts, ['c.example.com']);

  const deleted = await request(f.port, 'DELETE', '/setting/vhosts/c.example.com');
  t.strictSame(deleted.json, { version: VERSION, method: '/setting/vhosts/delete', status: 'OK', result: 'deleted', reason: null });
  t.strictSame(await fileHosts(f.settingPath), ['a.example.com', 'b.example.com']);
  t.strictSame(f.rt.applied[2]!.changedHosts, ['c.example.com']);

  const events = (await watchLines(f)).filter((l) => l.vhost === 'c.example.com').map((l) => l.event);
  t.strictSame(events, ['00020001', '00020003', '00020002']);
  const history = (await get(f.port, '/setting/history')).json.history as unknown[];
  t.equal(history.length, 4, 'each change is a history entry');
});

t.test('in exclusive mode a virtual host change re-applies every host', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await postJson(f.port, '/setting/vhosts', host('c.example.com'));
  t.equal(f.rt.applied[0]!.changedHosts, 'all');
});

t.test('creating an existing host is 409, a missing host 404, a bad body 400', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const dup = await postJson(f.port, '/setting/vhosts', host('a.example.com'));
  t.equal(dup.status, 409);
  t.match(dup.json, { method: '/setting/vhosts/create', status: 'fail', result: null });
  t.match(dup.json.reason, /already exists/);
  for (const [method, body] of [['GET', undefined], ['PUT', host('nope.example.com')], ['DELETE', undefined]] as const) {
    const r = body === undefined ? await request(f.port, method, '/setting/vhosts/nope.example.com') : await postJson(f.port, '/setting/vhosts/nope.example.com', body, method);
    t.equal(r.status, 404, `${method} of an unknown host`);
    t.equal(r.json.status, 'fail');
  }
  const notJson = await request(f.port, 'POST', '/setting/vhosts', { headers: { 'content-type': 'application/json' }, body: '{nope' });
  t.equal(notJson.status, 400);
  const wrongType = await request(f.port, 'POST', '/setting/vhosts', { headers: { 'content-type': 'text/plain' }, body: '{}' });
  t.equal(wrongType.status, 400, 'Content-Type application/json is required');
  const invalid = await postJson(f.port, '/setting/vhosts', { name: 'x.example.com', listen: 5 });
  t.equal(invalid.status, 400);
  t.match(invalid.json.reason, /hosting\[2\]\.listen/);
  const noName = await postJson(f.port, '/setting/vhosts', { origin: { address: ['1.2.3.4'] } });
  t.equal(noName.status, 400);
  const renamed = await postJson(f.port, '/setting/vhosts/a.example.com', host('other.example.com'), 'PUT');
  t.equal(renamed.status, 400, 'the body cannot rename the host');
  for (const method of ['GET', 'PUT', 'DELETE']) t.equal((await request(f.port, method, '/setting/vhosts')).status, 400, `${method} without a name`);
  t.equal(f.rt.applied.length, 0, 'nothing was applied');
});

t.test('virtual-host edits build on the running setting: a broken or edited file on disk is not used', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  await fs.writeFile(f.settingPath, '{ broken');
  const r = await get(f.port, '/setting/vhosts/a.example.com');
  t.equal(r.status, 200, 'the host comes from the running setting');
  t.match(r.json, { method: '/setting/vhosts/get', status: 'OK', result: { name: 'a.example.com' } });
  t.equal((await postJson(f.port, '/setting/vhosts', host('c.example.com'))).status, 200);
  const written = JSON.parse(await fs.readFile(f.settingPath, 'utf8')) as { hosting: Array<{ name: string }> };
  t.strictSame(written.hosting.map((h) => h.name), ['a.example.com', 'b.example.com', 'c.example.com'], 'the running hosts plus the new one');
});

t.test('a runtime that refuses a host change gives 500 and the file stays', async (t) => {
  const f = await startFixture();
  t.teardown(f.close);
  const before = await fs.readFile(f.settingPath, 'utf8');
  f.rt.refuse = 'listen *:8080 is taken';
  const r = await postJson(f.port, '/setting/vhosts', host('c.example.com'));
  t.equal(r.status, 500);
  t.match(r.json.reason, /listen \*:8080 is taken/);
  t.equal(await fs.readFile(f.settingPath, 'utf8'), before);
});

t.test('deleting a host another host uses as basehost is an update error', async (t) => {
  const f = await startFixture({ hosting: [host('a.example.com'), { name: 'b.example.com', mode: { basehost: 'a.example.com' } }] });
  t.teardown(f.close);
  const r = await request(f.port, 'DELETE', '/setting/vhosts/a.example.com');
  t.equal(r.status, 500);
  t.match(r.json.reason, /basehost/);
});
