// Black-box: the primary and several RT workers. Hash balance, a worker crash, graceful drain,
// reload and a rolling restart under load.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { Agent, request, type Dispatcher } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { baseSetting, primaryPids, startServer, writeSetting } from '../helpers/server.js';
import { pollUntil, waitFor } from '../helpers/wait.js';
import { HashRing } from '../../lib/balance/ring.js';

function workerPids(primaryPid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(primaryPid)]).toString().trim().split(/\s+/).filter(Boolean).map(Number);
  } catch { return []; }
}

const fresh = () => new Agent({ pipelining: 0, keepAliveTimeout: 1 });

/** Whether a TCP connection to the port on loopback is accepted. */
function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/**
 * Sends `loops` concurrent request loops (bounded to 15 s) while a SIGUSR2 rolling restart runs,
 * and counts answered and failed requests; `dispatcher` gives each request its connection pool.
 */
async function loadThroughRollingRestart(server: { signal(s: NodeJS.Signals): void; waitForLog: (p: (l: Record<string, unknown>) => boolean, ms?: number) => Promise<unknown> },
  url: string, host: string, loops: number, dispatcher: () => Dispatcher): Promise<{ ok: number; failed: number }> {
  let ok = 0, failed = 0, stop = false;
  const loop = async (): Promise<void> => {
    const until = Date.now() + 15000;
    while (!stop && Date.now() < until) {
      try {
        const r = await request(url, { headers: { host }, dispatcher: dispatcher() });
        await r.body.text();
        if (r.statusCode === 200) ok++; else failed++;
      } catch { failed++; }
    }
  };
  const running = Array.from({ length: loops }, loop);
  await waitFor(() => ok + failed >= 25);
  server.signal('SIGUSR2');
  await server.waitForLog((l) => l.msg === 'rolling restart done', 20000);
  // Requests go on for a while on the new workers.
  const atDone = ok + failed;
  await waitFor(() => ok + failed >= atDone + 30);
  stop = true;
  await Promise.all(running);
  return { ok, failed };
}


t.test('in hash balance each URL is fetched from the origin by its one owner worker', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const server = await startServer([{ name: 'h.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
    { workers: 2, balance: 'hash', env: { SVC_DEBUG_HEADERS: '1' } });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  const owners = new Set<string>();
  for (let u = 0; u < 12; u++) {
    for (let i = 0; i < 6; i++) {
      // A new connection each time, so the kernel hands requests to both workers.
      const r = await request(`http://127.0.0.1:${port}/obj/${u}`, { headers: { host: 'h.com' }, dispatcher: fresh() });
      await r.body.text();
      t.equal(r.statusCode, 200);
    }
    const fetchers = new Set(origin.seen.filter((s) => s.url === `/obj/${u}`).map((s) => String(s.headers['x-svc-worker'])));
    t.equal(fetchers.size, 1, `/obj/${u} was fetched by one worker only`);
    for (const f of fetchers) owners.add(f);
  }
  t.same([...owners].sort(), ['0', '1'], 'both workers own a share of the URLs');
  const fwd = origin.seen.filter((s) => s.url.startsWith('/obj/')).map((s) => s.headers['x-forwarded-for']);
  t.ok(fwd.every((x) => x === '127.0.0.1'), 'X-Forwarded-For names the client once, also after a hand-over');
});

t.test('a worker that dies is replaced and the service keeps answering', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const server = await startServer([{ name: 'c.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { workers: 2 });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  const before = workerPids(primaryPids(server)[0]!);
  t.equal(before.length, 2);
  process.kill(before[0]!, 'SIGKILL');
  await server.waitForLog((l) => l.msg === 'worker died; replacing it');
  const after = await pollUntil(async () => workerPids(primaryPids(server)[0]!), (pids) => pids.length === 2 && !pids.includes(before[0]!), { timeoutMs: 10_000, intervalMs: 100 });
  t.equal(after.length, 2, 'two workers again');
  t.notOk(after.includes(before[0]!), 'the dead one is gone');
  for (let i = 0; i < 10; i++) {
    const r = await request(`http://127.0.0.1:${port}/after-crash`, { headers: { host: 'c.com' }, dispatcher: fresh() });
    await r.body.text();
    t.equal(r.statusCode, 200);
  }
});

t.test('SIGTERM lets the request in flight finish, then everything exits 0', async (t) => {
  const origin = await new TestOrigin().start();
  let answer: () => void = () => undefined;
  origin.on('/slow', (_q, res) => { answer = () => { res.writeHead(200, { 'content-length': '4' }); res.end('done'); }; });
  const port = await freePort();
  const server = await startServer([{ name: 'd.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { workers: 2 });
  t.teardown(() => origin.stop());
  const inFlight = request(`http://127.0.0.1:${port}/slow`, { headers: { host: 'd.com' } });
  t.ok(await waitFor(() => origin.count('/slow') === 1), 'the request reached the origin');
  server.signal('SIGTERM');
  // The origin answers only once the workers have stopped listening: the request is in flight
  // through the drain.
  t.ok(await waitFor(async () => !(await connects(port)), { timeoutMs: 10_000, intervalMs: 50 }), 'new connections are refused');
  answer();
  const r = await inFlight;
  t.equal(r.statusCode, 200);
  t.equal(await r.body.text(), 'done');
  t.equal(await server.exited, 0, 'the primary exits 0');
  await t.rejects(request(`http://127.0.0.1:${port}/`, { headers: { host: 'd.com' } }), 'the port is closed');
});

t.test('SIGHUP applies a good setting and refuses a bad one, naming the bad field', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const server = await startServer([{ name: 'r.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }]);
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  const hosts = [
    { name: 'r.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
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

t.test('a rolling restart (SIGUSR2) under load fails no request, and the access log has each one once', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  // The workers append their access lines to the file themselves (lib/log/direct.ts): the old
  // ones until they drained, the new ones from their first request.
  const server = await startServer([{ name: 'z.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], {
    workers: 2, extra: { functions: { operations: { log: { meta: { dir: 'logs' }, access: { loopback: true }, origin: { enable: false } } } } },
  });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
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

t.test('a worker that keeps dying at start is restarted with growing back-off, and serves again once it can', async (t) => {
  // Test-only crash: SVC_WORKER_NODE_ARGS preloads a script into the workers (never the primary)
  // that exits at once while the marker file exists.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-crash-'));
  const marker = path.join(dir, 'crash-now');
  const preload = path.join(dir, 'crash.cjs');
  await fs.writeFile(preload, `if (require('node:fs').existsSync(${JSON.stringify(marker)})) process.exit(3);\n`);
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const server = await startServer([{ name: 'k.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
    { workers: 2, env: { SVC_WORKER_NODE_ARGS: `--require ${preload}`, SVC_DEBUG_HEADERS: '1' } });
  t.teardown(async () => { await server.stop(); await origin.stop(); await fs.rm(dir, { recursive: true, force: true }); });
  await fs.writeFile(marker, '');
  const victim = workerPids(primaryPids(server)[0]!)[0]!;
  process.kill(victim, 'SIGKILL');
  const delays: number[] = [];
  for (let i = 0; i < 3; i++) {
    const line = await server.waitForLog((l) => l.msg === 'worker restart delayed (back-off)' && !delays.includes(l.restartInMs as number), 15000);
    delays.push(line.restartInMs as number);
  }
  t.ok(delays[0]! > 0 && delays[1]! > delays[0]! && delays[2]! > delays[1]!, `each restart waits longer: ${delays.join(', ')} ms`);
  t.ok(server.logs.filter((l) => l.includes('replacement failed')).length >= 3, 'each failed replacement is logged');
  await fs.rm(marker);
  // A replacement that still crashed would exit at start: a worker of the slot that answers a
  // request (each answer names its worker) has started for good.
  const answered = new Set<string>();
  await waitFor(async () => {
    // Bounded, so a connection a dying worker took is one failed poll, not a hung test.
    const r = await request(`http://127.0.0.1:${port}/k`, { headers: { host: 'k.com' }, dispatcher: fresh(), headersTimeout: 3000, bodyTimeout: 3000 }).catch(() => undefined);
    if (r !== undefined) { await r.body.text().catch(() => undefined); answered.add(String(r.headers['x-svc-worker'])); }
    return answered.size === 2;
  }, { timeoutMs: 30_000, intervalMs: 50 });
  t.same([...answered].sort(), ['0', '1'], 'the slot is filled again once the worker can start: both workers answer');
  t.equal(workerPids(primaryPids(server)[0]!).length, 2);
  for (let i = 0; i < 6; i++) {
    const r = await request(`http://127.0.0.1:${port}/k`, { headers: { host: 'k.com' }, dispatcher: fresh() });
    t.equal(r.statusCode, 200);
    await r.body.text();
  }
});

t.test('in hash balance an absolute-form request handed to the owner is served by the host of its target', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const server = await startServer([
    { name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/a`] } },
    { name: 'b.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/b`] } },
  ], { workers: 2, balance: 'hash', env: { SVC_DEBUG_HEADERS: '1' } });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  for (let u = 0; u < 16; u++) {
    const r = await rawRequest(port, `GET http://a.com/abs/${u} HTTP/1.1\r\nHost: b.com\r\nConnection: close\r\n\r\n`);
    t.equal(r.status, 200);
    t.match(r.text, new RegExp(`origin:GET /a/abs/${u}$`), `/abs/${u} went to a.com's origin`);
  }
  const accepted = new Set(origin.seen.filter((s) => s.url.startsWith('/a/abs/')).map((s) => String(s.headers['x-svc-worker'])));
  t.same([...accepted].sort(), ['0', '1'], 'both workers fetched some, so some were handed over');
});

t.test('with one worker a rolling restart keeps the listening socket: no connection is refused', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const server = await startServer([{ name: 'one.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { workers: 1 });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  const before = workerPids(primaryPids(server)[0]!);
  // A new connection each time: a closed listening socket would show as ECONNREFUSED.
  const { ok, failed } = await loadThroughRollingRestart(server, `http://127.0.0.1:${port}/one`, 'one.com', 2, fresh);
  const after = await pollUntil(async () => workerPids(primaryPids(server)[0]!), (pids) => pids.length === 1 && !pids.includes(before[0]!), { timeoutMs: 10_000, intervalMs: 100 });
  t.equal(failed, 0, `no failed request among ${ok + failed}`);
  t.ok(ok > 20, `${ok} requests answered`);
  t.equal(after.length, 1);
  t.notOk(after.includes(before[0]!), 'the worker was replaced');
});

t.test('in hash balance a balance.luaPath script decides which worker owns a URL', async (t) => {
  // Ring points owned by worker 0 and by worker 1, read off the same ring the primary builds.
  const ring = new HashRing([0, 1]);
  let to0 = -1, to1 = -1;
  for (let p = 1; (to0 < 0 || to1 < 0) && p < 0xffffffff; p += 0x100000) {
    if (ring.ownerOfHash(p) === 0 && to0 < 0) to0 = p; else if (ring.ownerOfHash(p) === 1 && to1 < 0) to1 = p;
  }
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const extraDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-lua-'));
  const script = path.join(extraDir, 'owner.lua');
  await fs.writeFile(script, `function hash(key)\n  if key:find("/zero/", 1, true) then return 0x${to0.toString(16)} end\n  return 0x${to1.toString(16)}\nend\n`);
  const server = await startServer([{ name: 'l.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
    { workers: 2, balance: 'hash', luaPath: script, env: { SVC_DEBUG_HEADERS: '1' } });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  for (const dir of ['zero', 'one']) {
    for (let u = 0; u < 6; u++) {
      for (let i = 0; i < 3; i++) {
        const r = await request(`http://127.0.0.1:${port}/${dir}/${u}`, { headers: { host: 'l.com' }, dispatcher: fresh() });
        await r.body.text();
        t.equal(r.statusCode, 200);
      }
    }
  }
  const fetchers = (dir: string): string[] => [...new Set(origin.seen.filter((s) => s.url.startsWith(`/${dir}/`)).map((s) => String(s.headers['x-svc-worker'])))];
  t.same(fetchers('zero'), ['0'], 'every /zero/ URL was fetched by worker 0, as the script says');
  t.same(fetchers('one'), ['1'], 'every other URL was fetched by worker 1');
});
