// Black-box: what a deployment does to the running node. A removed host loses its cached
// content; a setting whose listener cannot be opened is refused and the old one keeps serving;
// a worker that dies while a deploy waits for it is not waited for; `meta.setting.deploy`
// shared keeps the origin connections of unchanged hosts, exclusive rebuilds every host; a
// kept listener takes the new frontEnd timeouts. Two nodes for the file (a start costs seconds):
// one with two workers for the first three, each deploy building on the one before; one with
// one worker for the last two.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { request as undiciRequest } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, startServer } from '../helpers/server.js';
import { call, fetchHost, LOCAL_LOGS, until } from '../lifecycle/fixtures/node.js';

t.test('two workers', async (t) => {
  // Test-only: a preload in the workers exits on the first setting message after the marker
  // file appears (taken by one worker only, by renaming it); without the marker it does nothing.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-die-'));
  const marker = path.join(dir, 'die-on-setting');
  const preload = path.join(dir, 'die.cjs');
  await fs.writeFile(preload, `const fs = require('node:fs');
process.on('message', (m) => {
  if (m && m.type === 'setting') { try { fs.renameSync(${JSON.stringify(marker)}, ${JSON.stringify(`${marker}.taken`)}); process.exit(9); } catch {} }
});\n`);
  const origin = await new TestOrigin().start();
  // Each origin fetch of /c answers a new version, so content from before the removal is recognisable.
  let version = 0;
  origin.on('/c', (_req, res) => { res.writeHead(200, { 'cache-control': 'max-age=600', 'content-type': 'text/plain' }); res.end(`v${++version}`); });
  const port = await freePort();
  const host = { name: 'r.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } };
  const keep = { name: 'k.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } };
  const server = await startServer([host, keep], { workers: 2, extra: LOCAL_LOGS, env: { SVC_WORKER_NODE_ARGS: `--require ${preload}`, SVC_DEBUG_HEADERS: '1' } });
  t.teardown(async () => { await server.stop(); await origin.stop(); await fs.rm(dir, { recursive: true, force: true }); });

  t.test('a host removed and added again starts with an empty cache', async (t) => {
    // Stored on disk (shared by both workers) once some request is a hit.
    await until(async () => ((await fetchHost(port, 'r.com', '/c')).cache.includes('HIT') ? true : undefined), 'a cache hit on r.com');
    const fetched = origin.count('/c');
    t.ok(fetched >= 1);
    const del = await call(server.apiPort, '/setting/vhosts/r.com', { method: 'DELETE' });
    t.equal(del.status, 200, del.text);
    t.equal((await fetchHost(port, 'r.com', '/c')).status, 404, 'the removed host is not served');
    const add = await call(server.apiPort, '/setting/vhosts', { body: JSON.stringify(host) });
    t.equal(add.status, 200, add.text);
    const before = version;
    const first = await fetchHost(port, 'r.com', '/c');
    t.equal(first.cache, 'TCP_MISS', 'the first request after re-adding is a miss');
    t.equal(origin.count('/c'), fetched + 1, 'the origin was asked again');
    // Both workers (memory tiers and the shared disk were emptied): nothing from before comes back.
    for (let i = 0; i < 6; i++) {
      const r = await fetchHost(port, 'r.com', '/c');
      t.ok(Number(r.body.slice(1)) > before, `request ${i} answers content fetched after re-adding (${r.body}, ${r.cache})`);
    }
    await server.waitForLog((l) => l.msg === 'content of removed hosts deleted');
  });

  t.test('a setting whose new listener cannot bind is refused; the old setting keeps serving', async (t) => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    t.teardown(() => taken.close());
    const takenPort = (taken.address() as net.AddressInfo).port;
    const runningBefore = (await call(server.apiPort, '/get/setting/running')).json.result;
    const historyBefore = (await call(server.apiPort, '/setting/history')).json.history as unknown[];

    const next = baseSetting([
      { ...keep, origin: { address: [`127.0.0.1:${origin.port}/changed`] } },
      { name: 'b.com', listen: `127.0.0.1:${takenPort}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
    ], server.basePort, { workers: 2, extra: LOCAL_LOGS }, server.apiPort);
    await fs.writeFile(server.settingPath, JSON.stringify(next));
    const r = await call(server.apiPort, '/setting/deploy/local');
    t.equal(r.json.status, 'Fail', r.text);
    t.equal(r.json.error, 4);
    t.match(String(r.json.reason), /not applied: cannot listen: 127\.0\.0\.1:\d+ \(hosting\[\]\.listen\): .*EADDRINUSE/);
    t.equal((await fetchHost(port, 'k.com', '/x')).body, 'origin:GET /x', 'the old origin of k.com still serves (every worker rolled back)');
    for (let i = 0; i < 4; i++) t.equal((await fetchHost(port, 'k.com', `/y${i}`)).body, `origin:GET /y${i}`);
    t.strictSame((await call(server.apiPort, '/get/setting/running')).json.result, runningBefore, '/get/setting/running is unchanged');
    t.equal(((await call(server.apiPort, '/setting/history')).json.history as unknown[]).length, historyBefore.length, 'nothing recorded');

    // The node is not stuck: the same change without the taken port applies.
    next.hosting = (next.hosting as unknown[]).slice(0, 1);
    await fs.writeFile(server.settingPath, JSON.stringify(next));
    const ok = await call(server.apiPort, '/setting/deploy/local');
    t.equal(ok.json.status, 'OK', ok.text);
    for (let i = 0; i < 4; i++) t.equal((await fetchHost(port, 'k.com', `/z${i}`)).body, `origin:GET /changed/z${i}`);
  });

  t.test('a worker that dies while a deploy waits for it is not waited for; its replacement runs the new setting', async (t) => {
    await fs.writeFile(marker, '');
    const next = baseSetting([{ ...keep, origin: { address: [`127.0.0.1:${origin.port}/new`] } }], server.basePort, { workers: 2, extra: LOCAL_LOGS }, server.apiPort);
    const r = await call(server.apiPort, '/setting/upload', { body: JSON.stringify(next) });
    // Waiting 30 s for the dead worker would have failed the deployment (not applied) instead.
    t.equal(r.json.status, 'OK', r.text);
    await fs.access(`${marker}.taken`);
    await server.waitForLog((l) => l.msg === 'worker died; replacing it');
    // New connections spread over both workers; each answer names its worker (SVC_DEBUG_HEADERS).
    const seen = new Map<string, string>();
    const wrong: string[] = [];
    await until(async () => {
      const res = await undiciRequest(`http://127.0.0.1:${port}/p${seen.size}`, { headers: { host: 'k.com', connection: 'close' }, reset: true });
      const body = await res.body.text();
      const worker = String(res.headers['x-svc-worker']);
      if (!body.startsWith('origin:GET /new/')) wrong.push(`${worker}: ${body}`);
      seen.set(worker, body);
      return seen.size >= 2 ? true : undefined;
    }, 'answers from both workers', 15_000);
    t.strictSame(wrong, [], 'every worker, the replacement too, serves the new setting');
  });
});

t.test('one worker', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const hostA = { name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/a`] } };
  const hostB = (path: string) => ({ name: 'b.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/${path}`] } });
  const server = await startServer([hostA, hostB('b1')], { extra: { ...LOCAL_LOGS, meta: { setting: { deploy: 'shared' } } } });
  t.teardown(async () => { await server.stop(); await origin.stop(); });

  t.test('shared deploys keep the origin connections of unchanged hosts; exclusive deploys rebuild every host', async (t) => {
    const upload = async (hosting: unknown[], deploy: string): Promise<void> => {
      const body = JSON.stringify(baseSetting(hosting, server.basePort, { extra: { ...LOCAL_LOGS, meta: { setting: { deploy } } } }, server.apiPort));
      const r = await call(server.apiPort, '/setting/upload', { body });
      t.equal(r.json.status, 'OK', r.text);
    };
    const portOfA = async (p: string): Promise<number> => {
      t.equal((await fetchHost(port, 'a.com', p)).body, `origin:GET /a${p}`);
      return origin.seen[origin.seen.length - 1]!.remotePort;
    };

    const first = await portOfA('/1');
    t.equal(await portOfA('/2'), first, 'a.com reuses its origin connection');
    await upload([hostA, hostB('b2')], 'shared');
    t.equal((await fetchHost(port, 'b.com', '/q')).body, 'origin:GET /b2/q', 'b.com changed');
    t.equal(await portOfA('/3'), first, 'after a shared deploy that changed only b.com, a.com still uses the same connection');

    await upload([hostA, hostB('b3')], 'exclusive');
    t.equal((await fetchHost(port, 'b.com', '/q')).body, 'origin:GET /b3/q');
    t.not(await portOfA('/4'), first, 'an exclusive deploy gave a.com a new origin pool');
  });

  t.test('a listener kept across a deploy takes the new frontEnd timeouts', async (t) => {
    const next = baseSetting([hostA], server.basePort, { extra: { ...LOCAL_LOGS, functions: { network: { http: { frontEnd: { headersTimeout: 1 } } } } } }, server.apiPort);
    const r = await call(server.apiPort, '/setting/upload', { body: JSON.stringify(next) });
    t.equal(r.json.status, 'OK', r.text);

    // A request head that never completes: answered 408 (after 1 s) before this client gives up
    // at 8 s, which it would not be under the former 10 s.
    const answer = await new Promise<string>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => s.write('GET /slow HTTP/1.1\r\nHost: a.com\r\n'));
      let text = '';
      s.on('data', (c: Buffer) => { text += c.toString(); });
      s.on('close', () => resolve(text));
      s.on('error', reject);
      setTimeout(() => { s.destroy(); resolve(text); }, 8000).unref();
    });
    t.match(answer, /^HTTP\/1\.1 408 /);
  });
});
