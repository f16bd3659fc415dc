// Black-box: origins whose answers break HTTP/1.1 itself (a status code outside 100-599, a chunk
// size that is no hex number), from a raw-socket origin on loopback, through the real server, to
// a raw client: the client gets a 502 when nothing of the answer went out yet, a cut connection
// once it had started, and the exchange is in the originError log as an origin failure.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

/** What the raw origin writes for a path; `later` is written once the test calls `sendRest`. */
const replies = new Map<string, { first: string; later?: string }>();
let sendRest: () => void = () => undefined;
const origin = net.createServer((socket) => {
  socket.on('error', () => undefined);
  socket.once('data', (d: Buffer) => {
    const p = d.toString('latin1').split(' ')[1]!.split('?')[0]!;
    const r = replies.get(p) ?? { first: 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n' };
    // One exchange per connection: each request finds a fresh one (the answers say close).
    const later = r.later;
    if (later === undefined) { socket.end(r.first); return; }
    socket.write(r.first);
    sendRest = () => socket.end(later);
  });
});
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
const originPort = (origin.address() as net.AddressInfo).port;

const cacheable = 'Cache-Control: max-age=600\r\nConnection: close\r\n';
replies.set('/s999', { first: `HTTP/1.1 999 Odd\r\n${cacheable}Content-Length: 2\r\n\r\nok` });
replies.set('/s600', { first: `HTTP/1.1 600 Odd\r\n${cacheable}Content-Length: 2\r\n\r\nok` });
replies.set('/bad-chunk', { first: `HTTP/1.1 200 OK\r\n${cacheable}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n` });
replies.set('/bad-chunk-late', { first: `HTTP/1.1 200 OK\r\n${cacheable}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`, later: 'zz\r\nhello\r\n0\r\n\r\n' });

const port = await freePort();
const server = await startServer([
  { name: 'odd.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${originPort}`] } },
], { extra: { env: { log: { originError: { enable: true } } } } });
t.teardown(async () => { await server.stop(); origin.close(); fs.rmSync(server.dir, { recursive: true, force: true }); });

const originErrors = (): string[] => {
  const file = path.join(server.dir, 'svclog', 'originError.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : [];
};
const lineOf = (url: string): string | undefined => originErrors().find((l) => l.split(' ')[7] === url);

t.test('an origin status above 599 is answered 502 and logged as an origin failure', async (t) => {
  for (const [method, url] of [['GET', '/s999'], ['GET', '/s600'], ['POST', '/s999?pass'], ['POST', '/s600?pass']] as const) {
    const body = method === 'POST' ? 'Content-Length: 1\r\n\r\nx' : '\r\n';
    const r = await rawRequest(port, `${method} ${url} HTTP/1.1\r\nHost: odd.test\r\nConnection: close\r\n${body}`);
    t.equal(r.status, 502, `${method} ${url}`);
    t.match(r.text, /\r\n\r\n502 Bad Gateway\n$/, 'a whole error answer');
    await until(() => lineOf(url) !== undefined, `the originError line of ${method} ${url}`);
    t.match(lineOf(url), new RegExp(`^\\S+ \\S+ Server-Close odd\\.test 127\\.0\\.0\\.1 127\\.0\\.0\\.1 ${method} \\S+ - \\d+ `));
  }
  t.equal((await rawRequest(port, 'GET /s999 HTTP/1.1\r\nHost: odd.test\r\nConnection: close\r\n\r\n')).status, 502, 'nothing was stored');
});

t.test('a broken chunk size before any body byte is answered 502 and logged as an origin failure', async (t) => {
  for (const [method, url] of [['GET', '/bad-chunk'], ['POST', '/bad-chunk?pass']] as const) {
    const body = method === 'POST' ? 'Content-Length: 1\r\n\r\nx' : '\r\n';
    const r = await rawRequest(port, `${method} ${url} HTTP/1.1\r\nHost: odd.test\r\nConnection: close\r\n${body}`);
    t.equal(r.status, 502, `${method} ${url}: ${JSON.stringify(r.text)}`);
    t.match(r.text, /\r\n\r\n502 Bad Gateway\n$/);
    await until(() => lineOf(url) !== undefined, `the originError line of ${method} ${url}`);
    t.match(lineOf(url), / Server-Close odd\.test /, lineOf(url) ?? '');
  }
});

t.test('a broken chunk size after the answer started cuts the connection', async (t) => {
  for (const [method, url] of [['GET', '/bad-chunk-late'], ['POST', '/bad-chunk-late?pass']] as const) {
    const body = method === 'POST' ? 'Content-Length: 1\r\n\r\nx' : '\r\n';
    const got: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${method} ${url} HTTP/1.1\r\nHost: odd.test\r\n${body}`));
    socket.on('data', (c: Buffer) => got.push(c));
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.on('error', () => undefined);
    await until(() => Buffer.concat(got).toString('latin1').includes('hello'), `${method}: the first chunk reached the client`);
    sendRest();
    await closed;
    const text = Buffer.concat(got).toString('latin1');
    t.match(text, /^HTTP\/1\.1 200 /, `${method}: the answer had started`);
    t.notMatch(text, /\r\n0\r\n\r\n$/, `${method}: the chunked body never ends: the client sees it incomplete`);
    await until(() => lineOf(url) !== undefined, `the originError line of ${method} ${url}`);
    t.match(lineOf(url), / Server-Close odd\.test /, lineOf(url) ?? '');
  }
});
