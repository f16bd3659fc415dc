// Black-box: a scripted origin, the real server, a client. Virtual host selection, request forms
// and what the origin receives.
import net from 'node:net';
import { Readable } from 'node:stream';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
const originB = await new TestOrigin().start();
const port = await freePort();
const port2 = await freePort();
// Hosts bound to two loopback addresses on one port, and a `*` port shared with a bound host.
const portIp = await freePort();
const portAny = await freePort();
const server = await startServer([
  { name: 'ip2.com', listen: `127.0.0.2:${portIp}`, origin: { address: [`127.0.0.1:${origin.port}/ip2`] } },
  { name: 'ip3.com', listen: `127.0.0.3:${portIp}`, origin: { address: [`127.0.0.1:${origin.port}/ip3`] } },
  { name: 'any.com', aliases: ['both.com'], listen: `*:${portAny}`, origin: { address: [`127.0.0.1:${origin.port}/any`] } },
  { name: 'bound.com', aliases: ['both.com'], listen: `127.0.0.2:${portAny}`, origin: { address: [`127.0.0.1:${origin.port}/bound`] } },
  { name: 'a.com', aliases: ['www.a.com', '*.img.a.com'], listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  { name: 'b.com', aliases: ['*.a.com'], listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${originB.port}/prefix`] } },
  { name: 'off.com', enable: false, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  { name: 'other-port.com', listen: `127.0.0.1:${port2}`, origin: { address: [`localhost:${origin.port}`] } },
], { extra: { meta: { defaultHosting: 'b.com' } } });
t.teardown(async () => { if (process.env.SHOW_LOGS) console.error(server.logs.join("\n")); await server.stop(); await origin.stop(); await originB.stop(); });

const get = (host: string, path = '/', p = port) =>
  request(`http://127.0.0.1:${p}${path}`, { headers: { host } }).then(async (r) => ({ status: r.statusCode, headers: r.headers, body: await r.body.text() }));

t.test('the Host header selects the virtual host by name, alias and longest wildcard', async (t) => {
  t.equal((await get('a.com', '/x')).body, 'origin:GET /x');
  t.equal((await get('www.a.com:' + port, '/y')).body, 'origin:GET /y');
  t.equal((await get('p.img.a.com', '/z')).body, 'origin:GET /z', '*.img.a.com is longer than *.a.com');
  t.equal((await get('p.a.com', '/w')).body, 'origin:GET /prefix/w', '*.a.com goes to b.com, whose address has a path');
});

t.test('an unknown host goes to meta.defaultHosting, a disabled host too', async (t) => {
  t.equal((await get('nobody.net', '/d')).body, 'origin:GET /prefix/d');
  t.equal((await get('off.com', '/e')).body, 'origin:GET /prefix/e');
});

t.test('a host is served only on its own listen port', async (t) => {
  const r = await get('other-port.com', '/q', port2);
  t.equal(r.status, 200);
  t.equal(r.body, 'origin:GET /q');
  const seen = origin.seen.find((s) => s.url === '/q')!;
  t.equal(seen.headers.host, `localhost:${origin.port}`, 'a domain address sends the domain and its port as Host');
});

t.test('an IP address sends the virtual host name as Host', async (t) => {
  await get('a.com', '/host-check');
  t.equal(origin.seen.find((s) => s.url === '/host-check')!.headers.host, `a.com:${origin.port}`);
});

t.test('absolute-form takes the host from the request target', async (t) => {
  const r = await rawRequest(port, 'GET http://a.com/abs?q=1 HTTP/1.1\r\nHost: b.com\r\nConnection: close\r\n\r\n');
  t.equal(r.status, 200);
  t.match(r.text, /origin:GET \/abs\?q=1$/);
});

t.test('OPTIONS * is answered by the server itself with the methods it allows', async (t) => {
  const r = await rawRequest(port, 'OPTIONS * HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n');
  t.equal(r.status, 200);
  t.match(r.text, /\r\nallow: GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS\r\n/i);
  t.match(r.text, /\r\ncontent-length: 0\r\n/i);
});

t.test('HTTP/1.0 requests are answered', async (t) => {
  const r = await rawRequest(port, 'GET /ten HTTP/1.0\r\nHost: a.com\r\n\r\n');
  t.equal(r.status, 200);
  t.ok(r.closed);
  t.match(r.text, /origin:GET \/ten$/);
});

t.test('with no matching host, on a port the default host does not listen on, the answer is 404', async (t) => {
  const r = await get('x.com', '/', port2);
  t.equal(r.status, 404);
  t.match(r.body, /404 Not Found/);
});

t.test('every method token passes through with its body', async (t) => {
  for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'M-SEARCH', 'PROPFIND']) {
    const withBody = !['GET', 'HEAD'].includes(method);
    const r = await request(`http://127.0.0.1:${port}/m/${method}`, { method, headers: { host: 'a.com' }, body: withBody ? `body-of-${method}` : undefined });
    await r.body.text();
    t.equal(r.statusCode, 200, `${method} answered`);
    const seen = origin.seen.find((s) => s.url === `/m/${method}`)!;
    t.equal(seen.method, method);
    t.equal(seen.body.toString(), withBody ? `body-of-${method}` : '', `${method} body intact`);
  }
});

t.test('a large chunked request body streams to the origin intact', async (t) => {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  async function* body() { for (let i = 0; i < 160; i++) yield chunk; }
  const r = await request(`http://127.0.0.1:${port}/upload`, { method: 'POST', headers: { host: 'a.com' }, body: Readable.from(body()) });
  await r.body.text();
  t.equal(r.statusCode, 200);
  const seen = origin.seen.find((s) => s.url === '/upload')!;
  t.equal(seen.body.length, 160 * 64 * 1024);
  t.equal(seen.headers['transfer-encoding'], 'chunked');
});

t.test('hop-by-hop fields are not forwarded and X-Forwarded-For is appended', async (t) => {
  const r = await rawRequest(port, 'GET /hop HTTP/1.1\r\nHost: a.com\r\nConnection: close, x-secret\r\nX-Secret: 1\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nX-Forwarded-For: 10.0.0.1\r\nX-Kept: yes\r\n\r\n');
  t.equal(r.status, 200);
  const seen = origin.seen.find((s) => s.url === '/hop')!;
  t.equal(seen.headers['x-secret'], undefined);
  t.equal(seen.headers['keep-alive'], undefined);
  t.equal(seen.headers.te, undefined);
  t.equal(seen.headers['x-kept'], 'yes');
  t.equal(seen.headers['x-forwarded-for'], '10.0.0.1, 127.0.0.1');
});

t.test('hop-by-hop fields of the origin answer are not forwarded to the client', async (t) => {
  origin.on('/resp-hop', (_q, res) => { res.writeHead(200, { connection: 'x-o', 'x-o': '1', 'x-end': '2', 'content-length': '2' }); res.end('ok'); });
  const r = await get('a.com', '/resp-hop');
  t.equal(r.headers['x-o'], undefined);
  t.equal(r.headers['x-end'], '2');
  t.equal(r.body, 'ok');
});

t.test('the answer streams to the client before the origin has finished', async (t) => {
  let finish: () => void = () => undefined;
  origin.on('/stream', (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first;');
    finish = () => res.end('last');
  });
  const r = await request(`http://127.0.0.1:${port}/stream`, { headers: { host: 'a.com' } });
  const it = r.body[Symbol.asyncIterator]();
  const first = await it.next();
  t.equal(Buffer.from(first.value as Uint8Array).toString(), 'first;', 'the first chunk arrived while the origin still held the rest');
  finish();
  let rest = '';
  for (let n = await it.next(); !n.done; n = await it.next()) rest += Buffer.from(n.value as Uint8Array).toString();
  t.equal(rest, 'last');
});

const getAt = (ip: string, p: number, host: string, path: string) =>
  request(`http://${ip}:${p}${path}`, { headers: { host } }).then(async (r) => ({ status: r.statusCode, body: await r.body.text() }));

t.test('a host bound to one IP answers only connections to that IP', async (t) => {
  t.equal((await getAt('127.0.0.2', portIp, 'ip2.com', '/r')).body, 'origin:GET /ip2/r');
  t.equal((await getAt('127.0.0.3', portIp, 'ip3.com', '/r')).body, 'origin:GET /ip3/r');
  const wrong = await getAt('127.0.0.3', portIp, 'ip2.com', '/r');
  t.equal(wrong.status, 404, 'ip2.com is not served on 127.0.0.3');
  t.equal((await getAt('127.0.0.2', portIp, 'ip3.com', '/r')).status, 404, 'nor ip3.com on 127.0.0.2');
});

t.test('on a port with a * host and a host bound to one IP, the bound host wins on its IP', async (t) => {
  t.equal((await getAt('127.0.0.2', portAny, 'both.com', '/w')).body, 'origin:GET /bound/w');
  t.equal((await getAt('127.0.0.1', portAny, 'both.com', '/w')).body, 'origin:GET /any/w', 'any other address gets the * host');
  t.equal((await getAt('127.0.0.1', portAny, 'bound.com', '/w')).status, 404, 'the bound host is not served elsewhere');
});

t.test('X-Forwarded-For names an IPv4 client plainly on a dual-stack * listener', async (t) => {
  await getAt('127.0.0.1', portAny, 'any.com', '/xff-any');
  const seen = origin.seen.find((s) => s.url === '/any/xff-any')!;
  t.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
});

t.test('a POST with Expect: 100-continue gets 100 Continue, then the origin answer to its body', async (t) => {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write('POST /expect HTTP/1.1\r\nHost: a.com\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
  let text = '';
  socket.on('data', (c: Buffer) => { text += c.toString('latin1'); });
  await waitFor(() => text.includes('\r\n\r\n'));
  t.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\n$/, 'the interim answer comes before the body is sent');
  socket.write('hello');
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  const timer = setTimeout(() => socket.destroy(), 5000);
  await closed;
  clearTimeout(timer);
  t.match(text, /\r\n\r\nHTTP\/1\.1 200 OK\r\n/, 'then the final answer');
  t.match(text, /origin:POST \/expect$/);
  const seen = origin.seen.find((s) => s.url === '/expect')!;
  t.equal(seen.body.toString(), 'hello');
  t.equal(seen.headers.expect, undefined, 'Expect is not sent on to the origin');
});
