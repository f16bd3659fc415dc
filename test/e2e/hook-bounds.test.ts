// Black-box: what a hook answer may not do, through the real server, a scripted hook server and a
// scripted origin on loopback. A host's hook acts for that host only (its name and aliases): an
// answer naming another host is an error answer, and nothing of it reaches the other host's
// origin or cache. A hook exchange has a deadline as a whole, not only between two chunks.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until, within } from '../helpers/wait.js';

const cont = { response: { code: 100 } };
/** The hook's answer per client path (the target in the request line of `message`). */
function answer(p: string): unknown {
  // The answer: another host's key, a near-endless TTL, a reflecting origin URL.
  const poison = (vhost: string, key: string) => ({ ...cont, vhost, cacheKey: key, cacheTtl: 99999999, originRequest: { method: 'GET', url: '/reflect/x' } });
  if (p === '/poison') return poison('edge.test', '/obj/hot?size=2048');
  if (p === '/poison-case') return poison('EDGE.test', '/obj/case');
  if (p === '/poison-wild') return poison('edge.wild.test', '/obj/wild');
  if (p === '/own-alias') return { ...cont, vhost: 'Alias.Hook.Test', cacheKey: '/own/alias' };
  if (p === '/own-wild') return { ...cont, vhost: 'x.wild.test', cacheKey: '/own/wild' };
  if (p === '/own-name') return { ...cont, vhost: 'hook.test', cacheKey: '/own/name' };
  return cont;
}

/** Hook calls whose connection the server closed while the answer still trickled. */
let trickleCut = 0;
/** The answer one byte at a time, each well within receiveTimeout (1 s) of the one before. */
function trickle(res: http.ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  let at = 0;
  const timer = setInterval(() => { if (at < text.length) res.write(text[at++]); else { clearInterval(timer); res.end(); } }, 250);
  res.once('close', () => { clearInterval(timer); if (at < text.length) trickleCut++; });
}

const hook = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const doc = JSON.parse(Buffer.concat(chunks).toString()) as { message: string };
    const p = doc.message.split(' ')[1]!.split('?')[0]!;
    const text = JSON.stringify(answer(p));
    if (p === '/trickle') { trickle(res, text); return; }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;

const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  const body = req.url.startsWith('/reflect/') ? `reflected ${req.url}` : `${req.headers.host} ${req.url}`;
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const logs = { origin: { loopback: true } };
const server = await startServer([
  { name: 'hook.test', aliases: ['alias.hook.test', '*.wild.test'], listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { hook: { enable: true, path: hookUrl, session: { connectTimeout: 1, receiveTimeout: 1 } }, operations: { log: logs } } },
  // A name the hook host's wildcard alias covers, but another host's own.
  { name: 'edge.test', aliases: ['edge.wild.test'], listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
], { extra: { functions: { operations: { log: { meta: { dir: 'logs' } } } } } });
t.teardown(async () => {
  await server.stop(); await origin.stop();
  hook.closeAllConnections();
  await new Promise<void>((r) => hook.close(() => r()));
  fs.rmSync(server.dir, { recursive: true, force: true });
});

async function send(h: string, p: string) {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host: h } });
  return { status: r.statusCode, cache: String(r.headers['x-cache']), body: await r.body.text() };
}
const api = async (p: string) => (await request(`http://127.0.0.1:${server.apiPort}${p}`)).statusCode;
const originLines = (): string[] => {
  const file = path.join(server.dir, 'logs', 'hook.test', 'origin.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.includes(' hook1 ')) : [];
};

t.test('a hook answer naming another host is refused like a malformed answer and never reaches that host\'s cache', async (t) => {
  for (const [p, key, named] of [['/poison', '/obj/hot?size=2048', 'edge.test'], ['/poison-case', '/obj/case', 'edge.test'],
    ['/poison-wild', '/obj/wild', 'edge.wild.test']] as const) {
    const r = await send('hook.test', p);
    t.equal(r.status, 510, `${p}: an error answer`);
    t.match(r.body, /vhost/, `${p}: the client body says why`);
    const edge = await send('edge.test', key);
    t.equal(edge.cache, 'TCP_MISS', `${p}: nothing was stored under ${key} on edge.test`);
    t.equal(edge.body, `edge.test:${origin.port} ${key}`, `${p}: edge.test clients get edge.test's own object`);
    await until(() => originLines().some((l) => l.includes(named) && l.includes('vhost')), `${p}: the hook1 line`);
    t.match(originLines().find((l) => l.includes(named) && l.includes('vhost'))!, /not\+this\+host/, `${p}: the origin log line says why`);
  }
  t.equal(origin.count('/reflect/x'), 0, 'the reflecting origin URL was never asked');
  t.equal(await api('/monitoring/fileinfo?url=hook.test/obj/hot?size=2048'), 404, 'nor stored on the hook\'s host');
});

t.test('a hook answer naming its own host, an alias or a name its wildcard alias takes is carried out on that host', async (t) => {
  for (const p of ['/own-name', '/own-alias', '/own-wild']) {
    const r = await send('hook.test', p);
    t.equal(r.status, 200, `${p}: served`);
    t.equal(r.body, `hook.test:${origin.port} /own/${p.slice(5)}`, `${p}: by the hook's host, under the answer's key`);
  }
});

t.test('a hook trickling its answer is cut at connectTimeout + receiveTimeout and the client gets 403 as from a slow hook', async (t) => {
  const started = performance.now();
  // The answer would take about 6 s (25 bytes, 250 ms apart); the deadline is 1 s + 1 s.
  const r = await within(send('hook.test', '/trickle'), 10_000, 'the answer to the client');
  const took = performance.now() - started;
  t.equal(r.status, 403, 'handled as a hook that failed');
  t.ok(took >= 1900 && took < 5000, `answered at the deadline, not after the whole trickle (${Math.round(took)} ms)`);
  await until(() => trickleCut === 1, 'the hook connection cut');
  t.equal(origin.count('/trickle'), 0, 'the origin was not asked');
  await until(() => originLines().some((l) => l.startsWith('#[ERROR:02]') && l.includes('Receive-Timeout') && l.includes('hook+too+slow')), 'the hook1 error line');
  t.pass('the hook1 line is a Receive-Timeout error line that says why');
});
