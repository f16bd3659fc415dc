// Black-box: a rolling restart (SIGUSR2) under load, with two workers and the access log, and with
// one worker (the listening socket is kept); then SIGHUP reloads the setting on that one-worker
// node, which needs no node of its own.
import fs from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, primaryPids, startServer, writeSetting } from '../helpers/server.js';
import { pollUntil, waitFor } from '../helpers/wait.js';
import { fresh, loadThroughRollingRestart, workerPids } from './fixtures/cluster.js';

const origin = await new TestOrigin().start();
t.teardown(() => origin.stop());

t.test('a rolling restart (SIGUSR2) under load fails no request, and the access log has each one once', async (t) => {
  const port = await freePort();
  // The workers append their access lines to the file themselves (lib/log/direct.ts): the old
  // ones until they drained, the new ones from their first request.
  const server = await startServer([{ name: 'z.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], {
    workers: 2, extra: { functions: { operations: { log: { meta: { dir: 'logs' }, access: { loopback: true }, origin: { enable: false } } } } },
  });
  t.teardown(() => server.stop());
  const before = workerPids(primaryPids(server)[0]!);
  const agent = new Agent({ connections: 8, keepAliveTimeout: 2000 });
  const { ok, failed } = await loadThroughRollingRestart(server, `http://127.0.0.1:${port}/load`, 'z.com', 4, () => agent);
  await agent.close();
  // The old workers exit once they have drained (bounded by drainTimeout, 5 s here).
  const after = await pollUntil(async () => workerPids(primaryPids(server)[0]!), (pids) => pids.length === 2 && !pids.some((p) => before.includes(p)), { timeoutMs: 10_000, intervalMs: 100 });
  t.equal(failed, 0, `no failed request among ${ok + failed}`);
  t.ok(ok > 50, `${ok} requests answered during the restart`);
  t.equal(after.filter((p) => before.includes(p)).length, 0, 'every worker was replaced');
  const file = path.join(server.dir, 'logs', 'z.com', 'access.log');
  const lines = async (): Promise<string[]> => (await fs.readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l.includes(' /load '));
  await pollUntil(lines, (l) => l.length >= ok, { timeoutMs: 10_000, intervalMs: 100 });
  t.equal((await lines()).length, ok, 'one access line per request, across the old and the new workers');
});

t.test('one worker', async (t) => {
  const port = await freePort();
  const server = await startServer([{ name: 'one.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { workers: 1 });
  t.teardown(() => server.stop());

  t.test('with one worker a rolling restart keeps the listening socket: no connection is refused', async (t) => {
    const before = workerPids(primaryPids(server)[0]!);
    // A new connection each time: a closed listening socket would show as ECONNREFUSED.
    const { ok, failed } = await loadThroughRollingRestart(server, `http://127.0.0.1:${port}/one`, 'one.com', 2, fresh);
    const after = await pollUntil(async () => workerPids(primaryPids(server)[0]!), (pids) => pids.length === 1 && !pids.includes(before[0]!), { timeoutMs: 10_000, intervalMs: 100 });
    t.equal(failed, 0, `no failed request among ${ok + failed}`);
    t.ok(ok > 20, `${ok} requests answered`);
    t.equal(after.length, 1);
    t.notOk(after.includes(before[0]!), 'the worker was replaced');
  });

  t.test('SIGHUP applies a good setting and refuses a bad one, naming the bad field', async (t) => {
    const hosts = [
      { name: 'one.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
      { name: 'new.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/new`] } },
    ];
    await writeSetting(server.dir, baseSetting(hosts, server.basePort, {}, server.apiPort));
    const goodText = await fs.readFile(server.settingPath, 'utf8');
    server.signal('SIGHUP');
    await server.waitForLog((l) => l.msg === 'setting reloaded');
    // The reload ends by rewriting setting.json; the API shows the new text as the running one once
    // it has (a file written before that would be overwritten).
    t.ok(await waitFor(async () => (await (await request(`http://127.0.0.1:${server.apiPort}/setting/setting.json`)).body.text()) === goodText),
      'the reloaded setting is the running one');
    const added = await request(`http://127.0.0.1:${port}/x`, { headers: { host: 'new.com' } });
    t.equal(await added.body.text(), 'origin:GET /new/x', 'the added host serves');

    const bad = baseSetting(hosts, server.basePort, {}, server.apiPort) as { hosting: { origin: { address: unknown[] } }[] };
    bad.hosting[1]!.origin.address = [42];
    await fs.writeFile(server.settingPath, JSON.stringify(bad));
    server.signal('SIGHUP');
    const refused = await server.waitForLog((l) => l.msg === 'setting refused; the running setting stays');
    t.match(JSON.stringify(refused.issues), /hosting\[1\]\.origin\.address\[0\]/);
    const r = await request(`http://127.0.0.1:${port}/y`, { headers: { host: 'new.com' } });
    t.equal(await r.body.text(), 'origin:GET /new/y', 'the running setting still serves');
  });
});
