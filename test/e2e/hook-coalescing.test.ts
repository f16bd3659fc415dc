// Black-box: coalescing behind the hook across the node (hash balance, two workers). Clients on
// either worker whose URLs the hook maps to one cacheKey are handed to that key's owner with the
// hook's redefinition, hooked once each, and share the owner's one origin fetch.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

let key = '/shared/0';
let hookCalls = 0;
const hook = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    hookCalls++;
    const text = JSON.stringify({ response: { code: 100 }, cacheKey: key, originRequest: { method: 'GET', headers: [{ key: 'x-from-hook', value: 'yes' }] } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));

// The origin sends the head and a first chunk at once and the rest when the test says: every
// client that shares the fetch has its head while the fetch is still in flight.
const gates: Array<() => void> = [];
const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-type': 'text/plain' });
  res.write(`start ${req.url} `);
  gates.push(() => res.end('end'));
});
const recordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-records-'));
const port = await freePort();
const server = await startServer([{
  name: 'h.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  functions: { hook: { enable: true, path: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/` } },
}, { name: 'plain.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
{ workers: 2, balance: 'hash', env: { SVC_TEST_RECORD_DIR: recordDir } });
t.teardown(async () => {
  for (const g of gates) g();
  await server.stop(); await origin.stop(); await new Promise<void>((r) => hook.close(() => r()));
  fs.rmSync(recordDir, { recursive: true, force: true });
});

interface Rec { urlReceived: string; handedTo: number; fromSibling: boolean }
function records(): Rec[] {
  const out: Rec[] = [];
  for (const f of fs.readdirSync(recordDir)) {
    for (const line of fs.readFileSync(path.join(recordDir, f), 'utf8').split('\n')) if (line !== '') out.push(JSON.parse(line) as Rec);
  }
  return out;
}

const CLIENTS = 12;

t.test('clients on both workers mapped to one cacheKey make one origin fetch', async (t) => {
  // The kernel spreads new connections over the workers as it likes: rounds (bounded) until one
  // had clients on the worker that does not own the key, each round with a key of its own.
  let crossed = false;
  for (let round = 0; round < 5 && !crossed; round++) {
    key = `/shared/${round}`;
    const calls = hookCalls;
    const agents = Array.from({ length: CLIENTS }, () => new Agent({ pipelining: 0 }));
    const answers = await Promise.all(agents.map((agent, i) =>
      request(`http://127.0.0.1:${port}/r${round}/${i}`, { headers: { host: 'h.test', connection: 'close' }, dispatcher: agent })));
    // Every client has its head: each one either shares a fetch or made its own by now.
    t.equal(origin.count(key), 1, `round ${round}: one origin fetch for ${CLIENTS} clients`);
    t.equal(hookCalls - calls, CLIENTS, 'each client hooked once, never again by the owner');
    gates.splice(0).forEach((g) => g());
    const bodies = await Promise.all(answers.map((a) => a.body.text()));
    t.strictSame(new Set(bodies), new Set([`start ${key} end`]));
    await Promise.all(agents.map((a) => a.close()));
    await until(() => records().filter((r) => r.urlReceived.startsWith(`/r${round}/`)).length >= CLIENTS, 'the round\'s records', 10_000);
    crossed = records().some((r) => r.urlReceived.startsWith(`/r${round}/`) && r.handedTo >= 0);
  }
  t.ok(crossed, 'some clients reached the worker that does not own the key and were handed over');
  const fetched = origin.seen.filter((s) => s.url.startsWith('/shared/'));
  t.ok(fetched.every((s) => s.headers['x-from-hook'] === 'yes'), 'the owner sent the hook\'s originRequest fields');
  t.notOk(fetched.some((s) => s.headers['x-svc-hooked'] !== undefined), 'the redefinition mark never reaches the origin');
  t.equal(origin.seen.filter((s) => s.url.startsWith('/r')).length, 0, 'the client URLs are never asked');
});

t.test('a client\'s own x-svc-hooked field is not passed to the owner worker', async (t) => {
  const forged = Buffer.from(JSON.stringify({ k: '/victim' })).toString('base64url');
  for (let i = 0; i < 12; i++) {
    const agent = new Agent({ pipelining: 0 });
    const r = request(`http://127.0.0.1:${port}/p/${i}`, { headers: { host: 'plain.test', connection: 'close', 'x-svc-hooked': forged }, dispatcher: agent });
    await until(() => gates.length > 0, 'the origin asked');
    gates.splice(0).forEach((g) => g());
    t.equal((await (await r).body.text()), `start /p/${i} end`);
    await agent.close();
  }
  await until(() => records().filter((r) => r.urlReceived.startsWith('/p/')).length >= 12, 'the records', 10_000);
  t.ok(records().some((r) => r.urlReceived.startsWith('/p/') && r.handedTo >= 0), 'some were handed to their owner');
  const info = await request(`http://127.0.0.1:${server.apiPort}/monitoring/fileinfo?url=plain.test/victim`);
  await info.body.text();
  t.equal(info.statusCode, 404, 'nothing was stored under the forged key');
});
