// Black-box: slow request bodies must not take the origin connections other clients need. A
// small body is read whole before a connection is taken (frontEnd.bufferBodyUpTo), and a client
// that uploads slower than frontEnd.bodyMinRate gets 408 and its connection closed.
import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import t from 'tap';
import { request } from 'undici';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until, within } from '../helpers/wait.js';

interface Seen { head: string; body: number; complete: boolean; dropped?: boolean }
const seen: Seen[] = [];
let originConnections = 0;
const origin = http.createServer((req, res) => {
  const s: Seen = { head: `${req.method} ${req.url}`, body: 0, complete: false };
  seen.push(s);
  req.on('data', (c: Buffer) => { s.body += c.length; });
  req.once('close', () => { if (!s.complete) s.dropped = true; });
  req.on('end', () => {
    s.complete = true;
    const body = `got ${s.body} bytes`;
    res.writeHead(200, { 'content-length': Buffer.byteLength(body), 'cache-control': 'max-age=60' });
    res.end(body);
  });
});
origin.on('connection', () => { originConnections++; });
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
const originPort = (origin.address() as net.AddressInfo).port;
const seenOf = (head: string): Seen | undefined => seen.find((s) => s.head === head);

const port = await freePort();
const server = await startServer([
  {
    name: 'uploads.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${originPort}`] },
    functions: { network: { http: { backEnd: { session: { maxConnections: 2 } } } } },
  },
  {
    name: 'minrate.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${originPort}`] },
    functions: { network: { http: { frontEnd: { bodyMinRate: { bytesPerSecond: 1000, period: 1 } } } } },
  },
], { workers: 1 });
const clients = new Set<net.Socket>();
t.teardown(async () => {
  for (const c of clients) c.destroy();
  await server.stop();
  origin.closeAllConnections();
  await new Promise((r) => origin.close(r));
});

/** A raw upload: the head (with Expect: 100-continue, so we know the worker took it in), then body bytes at will. */
class Upload {
  readonly socket: net.Socket;
  received = '';
  readonly closed: Promise<void>;
  constructor(host: string, path: string, readonly total: number) {
    this.socket = net.connect(port, '127.0.0.1');
    clients.add(this.socket);
    this.socket.on('data', (c: Buffer) => { this.received += c.toString('latin1'); });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((r) => this.socket.once('close', () => r()));
    this.socket.write(`POST ${path} HTTP/1.1\r\nHost: ${host}\r\nExpect: 100-continue\r\nContent-Length: ${total}\r\n\r\n`);
  }

  /** node answers 100 Continue as it hands the request to the worker's handler. */
  taken(): Promise<void> {
    return until(() => this.received.startsWith('HTTP/1.1 100 Continue'), 'the 100 Continue of an upload');
  }

  send(n: number): Promise<void> {
    return new Promise((ok, fail) => this.socket.write(Buffer.alloc(n, 'b'), (err) => (err ? fail(err) : ok())));
  }
}

t.test('stalled uploads take no origin connection: a cache miss of another client is answered while more uploads than the pool stall', async (t) => {
  const connectionsBefore = originConnections;
  const uploads = Array.from({ length: 4 }, (_v, i) => new Upload('uploads.test', `/upload-${i}`, 10 * 1024));
  for (const u of uploads) await u.taken();
  for (const u of uploads) await u.send(10);

  // Far shorter than the uploads' stall, which lasts until this test sends the rest.
  const miss = await within(request(`http://127.0.0.1:${port}/miss`, { headers: { host: 'uploads.test' } }), 5000, 'the cache miss');
  t.equal(miss.statusCode, 200);
  t.equal(await miss.body.text(), 'got 0 bytes');
  t.equal(seen.filter((s) => s.head.startsWith('POST /upload-')).length, 0, 'the origin saw none of the unfinished uploads');
  t.equal(originConnections - connectionsBefore, 1, 'only the miss opened an origin connection');

  await uploads[0]!.send(10 * 1024 - 10);
  await until(() => uploads[0]!.received.includes('got 10240 bytes'), 'the answer to the completed upload');
  t.match(uploads[0]!.received, /HTTP\/1\.1 200 OK/);
  t.same(seenOf('POST /upload-0'), { head: 'POST /upload-0', body: 10240, complete: true }, 'the origin got the whole body once it was complete');
  t.equal(seen.filter((s) => s.head.startsWith('POST /upload-')).length, 1, 'the stalled ones still have not reached it');
  for (const u of uploads) u.socket.destroy();
});

t.test('a client that uploads slower than bodyMinRate gets 408 and its connection is closed', async (t) => {
  const u = new Upload('minrate.test', '/trickle', 10 * 1024);
  await u.taken();
  await u.send(10);
  await within(u.closed, 10_000, 'the server to close the stalled upload');
  t.match(u.received, /HTTP\/1\.1 408 Request Timeout\r\n/);
  t.match(u.received, /\r\nconnection: close\r\n/i);
  t.equal(seenOf('POST /trickle'), undefined, 'the origin never saw it');
});

t.test('an upload that stalls while it streams to the origin gets 408 and the origin request is abandoned', async (t) => {
  const u = new Upload('minrate.test', '/stall-streaming', 200_000);
  await u.taken();
  await u.send(100_000);
  await until(() => seenOf('POST /stall-streaming') !== undefined, 'the origin receiving the large upload');
  await within(u.closed, 10_000, 'the server to close the stalled upload');
  t.match(u.received, /HTTP\/1\.1 408 Request Timeout\r\n/);
  const s = seenOf('POST /stall-streaming')!;
  await until(() => s.dropped === true, 'the origin request to be dropped');
  t.notOk(s.complete, 'the origin never got a complete body');
  t.ok(s.body < 200_000);
});

t.test('bodies larger than bufferBodyUpTo, and chunked ones, reach the origin whole', async (t) => {
  const big = await request(`http://127.0.0.1:${port}/big`, { method: 'POST', headers: { host: 'uploads.test' }, body: Buffer.alloc(300_000, 'z') });
  t.equal(await big.body.text(), 'got 300000 bytes');
  async function* chunks(): AsyncGenerator<Buffer> { for (let i = 0; i < 10; i++) yield Buffer.alloc(1000, 'c'); }
  const chunked = await request(`http://127.0.0.1:${port}/chunked`, { method: 'POST', headers: { host: 'uploads.test' }, body: Readable.from(chunks()) });
  t.equal(await chunked.body.text(), 'got 10000 bytes');
  async function* bigChunks(): AsyncGenerator<Buffer> { for (let i = 0; i < 20; i++) yield Buffer.alloc(10_000, 'c'); }
  const bigChunked = await request(`http://127.0.0.1:${port}/big-chunked`, { method: 'POST', headers: { host: 'uploads.test' }, body: Readable.from(bigChunks()) });
  t.equal(await bigChunked.body.text(), 'got 200000 bytes');
});
