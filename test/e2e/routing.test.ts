// Black-box: a scripted origin, the real server, a client. Virtual host selection, request forms
// and what the origin receives.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

const origin = await new TestOrigin().start();
const originB = await new TestOrigin().start();
const port = await freePort();
const port2 = await freePort();
const server = await startServer([
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
  const r = await request(`http://127.0.0.1:${port}/upload`, { method: 'POST', headers: { host: 'a.com' }, body: body() });
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
