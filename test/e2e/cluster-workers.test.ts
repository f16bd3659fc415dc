// Black-box: the primary and two RT workers, one node for the file: the workers' malloc arena
// count; a worker killed is replaced; one that keeps dying at start is restarted with growing
// back-off; then SIGTERM drains the node. The node's workers preload a test-only script
// (SVC_WORKER_NODE_ARGS, never the primary) that exits at once while a marker file exists;
// without the marker it does nothing.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { primaryPids, startServer } from '../helpers/server.js';
import { pollUntil, waitFor } from '../helpers/wait.js';
import { connects, fresh, workerPids } from './fixtures/cluster.js';

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-crash-'));
const marker = path.join(dir, 'crash-now');
const preload = path.join(dir, 'crash.cjs');
await fs.writeFile(preload, `if (require('node:fs').existsSync(${JSON.stringify(marker)})) process.exit(3);\n`);
const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([{ name: 'k.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
  { workers: 2, env: { SVC_WORKER_NODE_ARGS: `--require ${preload}`, SVC_DEBUG_HEADERS: '1' } });
t.teardown(async () => { await server.stop(); await origin.stop(); await fs.rm(dir, { recursive: true, force: true }); });
const workers = (): number[] => workerPids(primaryPids(server)[0]!);

t.test('workers run with one malloc arena unless the operator chose a number (MALLOC_ARENA_MAX)', async (t) => {
  const expected = process.env.MALLOC_ARENA_MAX ?? '1';
  for (const pid of workers()) {
    const env = (await fs.readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
    t.ok(env.includes(`MALLOC_ARENA_MAX=${expected}`), `worker ${pid} has MALLOC_ARENA_MAX=${expected}`);
  }
});

t.test('a worker that dies is replaced and the service keeps answering', async (t) => {
  const before = workers();
  t.equal(before.length, 2);
  process.kill(before[0]!, 'SIGKILL');
  await server.waitForLog((l) => l.msg === 'worker died; replacing it');
  const after = await pollUntil(async () => workers(), (pids) => pids.length === 2 && !pids.includes(before[0]!), { timeoutMs: 10_000, intervalMs: 100 });
  t.equal(after.length, 2, 'two workers again');
  t.notOk(after.includes(before[0]!), 'the dead one is gone');
  for (let i = 0; i < 10; i++) {
    const r = await request(`http://127.0.0.1:${port}/after-crash`, { headers: { host: 'k.com' }, dispatcher: fresh() });
    await r.body.text();
    t.equal(r.statusCode, 200);
  }
});

t.test('a worker that keeps dying at start is restarted with growing back-off, and serves again once it can', async (t) => {
  // The death above was a single one: it restarted at once and wrote no back-off line.
  await fs.writeFile(marker, '');
  const victim = workers()[0]!;
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
  t.equal(workers().length, 2);
  for (let i = 0; i < 6; i++) {
    const r = await request(`http://127.0.0.1:${port}/k`, { headers: { host: 'k.com' }, dispatcher: fresh() });
    t.equal(r.statusCode, 200);
    await r.body.text();
  }
});

// Last: it ends the node.
t.test('SIGTERM lets the request in flight finish, then everything exits 0', async (t) => {
  let answer: () => void = () => undefined;
  origin.on('/slow', (_q, res) => { answer = () => { res.writeHead(200, { 'content-length': '4' }); res.end('done'); }; });
  const inFlight = request(`http://127.0.0.1:${port}/slow`, { headers: { host: 'k.com' } });
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
  await t.rejects(request(`http://127.0.0.1:${port}/`, { headers: { host: 'k.com' } }), 'the port is closed');
});
