// Black-box: interim (1xx) answers of the origin reach the client before the final answer, over
// HTTP/1.1 (raw socket) and HTTP/2 (nghttp, cleartext prior knowledge), and are never stored.
// The origin holds its final answer until the client has shown the interim one: that proves
// "as they arrive", not "bundled with the answer".
import { spawn } from 'node:child_process';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const HOST = 'hints.test';
const LINK = '</style.css>; rel=preload; as=style, </app.js>; rel=preload; as=script';
const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([{ name: HOST, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], {
  extra: { functions: { network: { http: { frontEnd: { http2: { cleartext: true } } } } } },
});
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** Final answers the origin holds back, by path, until the test releases them. */
const held = new Map<string, () => void>();

/** An object that sends 103 Early Hints (and 102 when asked), then its final answer once released. */
function hinted(path: string, cacheControl: string, processing = false): void {
  origin.on(path, (_q, res: ServerResponse) => {
    if (processing) res.writeProcessing();
    res.writeEarlyHints({ link: LINK.split(', '), 'x-early': 'yes' });
    held.set(path, () => {
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': cacheControl, 'content-length': 5 });
      res.end('final');
    });
  });
}

/** What a raw HTTP/1.x client receives, readable while the answer is still coming. */
function rawClient(request: string): { text: () => string; closed: Promise<void> } {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
  let text = '';
  socket.on('data', (c: Buffer) => { text += c.toString('latin1'); });
  const closed = new Promise<void>((r) => { socket.on('close', () => r()); socket.on('error', () => r()); });
  const timer = setTimeout(() => socket.destroy(), 15_000);
  void closed.then(() => clearTimeout(timer));
  return { text: () => text, closed };
}

t.test('an HTTP/1.1 client sees 103 Early Hints with the origin\'s Link fields before the final answer, which is then cached', async (t) => {
  hinted('/page', 'max-age=600');
  const c = rawClient(`GET /page HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`);
  await until(() => c.text().includes('\r\n\r\n'), 'the interim head');
  t.match(c.text(), /^HTTP\/1\.1 103 Early Hints\r\n/, 'the 103 arrives while the origin still holds its answer');
  t.match(c.text(), new RegExp(`\r\nlink: ${LINK.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\r\n`, 'i'), 'Link unchanged');
  t.match(c.text(), /\r\nx-early: yes\r\n/i);
  t.notMatch(c.text(), /HTTP\/1\.1 200/);
  held.get('/page')!();
  await c.closed;
  const parts = c.text().split(/(?=HTTP\/1\.1 \d{3} )/);
  t.same(parts.map((p) => Number(p.slice(9, 12))), [103, 200]);
  t.ok(parts[1]!.endsWith('\r\n\r\nfinal'));
  // The stored object is the final answer: a hit has no interim answer in front of it.
  const hit = await rawRequest(port, `GET /page HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`);
  t.match(hit.text, /^HTTP\/1\.1 200 /);
  t.match(hit.text, /\r\nx-cache: TCP_HIT\r\n/i);
  t.notMatch(hit.text, /103/);
  t.equal(origin.count('/page'), 1);
});

t.test('102 and 103 reach a client of a pass-through (uncacheable) answer in the order sent', async (t) => {
  hinted('/private', 'private', true);
  const c = rawClient(`GET /private HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`);
  await until(() => c.text().includes('103 Early Hints') && c.text().endsWith('\r\n\r\n'), 'both interim answers');
  held.get('/private')!();
  await c.closed;
  const statuses = c.text().split(/(?=HTTP\/1\.1 \d{3} )/).map((p) => Number(p.slice(9, 12)));
  t.same(statuses, [102, 103, 200]);
  // Not stored: the next request goes to the origin again and gets its own interim answers.
  const again = rawClient(`GET /private HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`);
  await until(() => origin.count('/private') === 2 && again.text().includes('103 Early Hints'), 'the second pass');
  held.get('/private')!();
  await again.closed;
  t.match(again.text(), /HTTP\/1\.1 200 [\s\S]*final$/);
});

t.test('a POST proxied to the origin gets its 103 before the final answer', async (t) => {
  hinted('/form', 'no-store');
  const c = rawClient(`POST /form HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc`);
  await until(() => c.text().includes('103 Early Hints') && c.text().endsWith('\r\n\r\n'), 'the interim answer');
  t.notMatch(c.text(), /HTTP\/1\.1 200/);
  held.get('/form')!();
  await c.closed;
  t.same(c.text().split(/(?=HTTP\/1\.1 \d{3} )/).map((p) => Number(p.slice(9, 12))), [103, 200]);
  t.equal(origin.seen.find((s) => s.url === '/form')?.body.toString(), 'abc');
});

t.test('an HTTP/1.0 client gets no interim answer (RFC 9110 15.2), only the final one', async (t) => {
  hinted('/old', 'max-age=600');
  const c = rawClient(`GET /old HTTP/1.0\r\nHost: ${HOST}\r\n\r\n`);
  await until(() => origin.count('/old') === 1, 'the origin asked');
  held.get('/old')!();
  await c.closed;
  t.match(c.text(), /^HTTP\/1\.[01] 200 /);
  t.notMatch(c.text(), /103/);
});

t.test('nghttp over HTTP/2 sees a 103 HEADERS frame with the Link field before the final answer', async (t) => {
  hinted('/h2page', 'max-age=600');
  const child = spawn('nghttp', ['-v', '-H', `:authority: ${HOST}`, `http://127.0.0.1:${port}/h2page`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)));
  const timer = setTimeout(() => child.kill(), 15_000);
  await until(() => /:status: 103/.test(out), 'the 103 HEADERS frame', 12_000);
  t.notMatch(out, /:status: 200/, 'before the final answer');
  t.match(out, new RegExp(`link: ${LINK.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
  t.match(out, /x-early: yes/);
  held.get('/h2page')!();
  t.equal(await exited, 0);
  clearTimeout(timer);
  t.match(out, /:status: 200/);
  t.ok(out.indexOf(':status: 103') < out.indexOf(':status: 200'));
});
