// Black-box: the hook under hash balance with two workers. A hooked request is hooked once, on
// the worker its client reached; the owner of the hook's key serves it with that redefinition
// (hook-coalescing.test.ts: one fetch for the node) and stores it under the hook's key.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

let hookCalls = 0;
const hook = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    hookCalls++;
    const text = JSON.stringify({ response: { code: 100 }, cacheKey: '/same' });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  const body = `stored ${req.url}`;
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const server = await startServer([{
  name: 'h.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  functions: { hook: { enable: true, path: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/` } },
}], { workers: 2, balance: 'hash' });
t.teardown(async () => { await server.stop(); await origin.stop(); await new Promise<void>((r) => hook.close(() => r())); });

t.test('clients on new connections (either worker) with URLs mapped to one cacheKey are each hooked once and served from the hook key', async (t) => {
  const bodies: string[] = [];
  for (let i = 0; i < 8; i++) {
    // The first copy's index row is committed just after its client has the answer.
    if (i === 1) {
      const listed = await pollUntil(async () => (await request(`http://127.0.0.1:${server.apiPort}/monitoring/fileinfo?url=h.test/same`)).statusCode, (s) => s === 200, { timeoutMs: 5000, intervalMs: 50 });
      t.equal(listed, 200, 'stored under the hook key');
    }
    // A new connection each time, so the kernel spreads the clients over both workers.
    const agent = new Agent({ pipelining: 0 });
    const r = await request(`http://127.0.0.1:${port}/u/${i}`, { headers: { host: 'h.test', connection: 'close' }, dispatcher: agent });
    t.equal(r.statusCode, 200);
    bodies.push(await r.body.text());
    await agent.close();
  }
  t.equal(hookCalls, 8, 'each request is hooked once (never again by an owner worker)');
  t.strictSame(new Set(bodies), new Set(['stored /same']));
  // One owner of the hook's key for the node: fetched once, the later clients are its hits.
  t.equal(origin.count('/same'), 1, 'one origin fetch for the node');
  t.equal(origin.seen.filter((s) => s.url !== '/same').length, 0, 'the client URLs are never asked');
});
