// Black-box: several requests in one write. Every complete request is answered, in order, before
// whatever ends the connection (a malformed message), and an Upgrade request (no upgrade is
// implemented) is answered as an ordinary request with the ones after it.
import net from 'node:net';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest, splitResponses } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

const origin = await new TestOrigin().start();
// /held is never answered; the test hears when it arrives and when the server gives it up.
let heldSeen: () => void = () => undefined;
let heldClosed: () => void = () => undefined;
origin.on('/held', (_req, res) => { res.once('close', () => heldClosed()); heldSeen(); });
const port = await freePort();
const server = await startServer([
  { name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  // One origin connection: its origin requests reach the origin in the order they were made.
  { name: 'one.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { network: { http: { backEnd: { session: { maxConnections: 1 } } } } } },
]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** Status and body of every answer a connection received, e.g. `200 origin:GET /x`, `400`. */
async function answers(bytes: string): Promise<{ seen: string[]; closed: boolean }> {
  const r = await rawRequest(port, bytes);
  const seen = splitResponses(r.text).map((a) => (a.status < 400 ? `${a.status} ${a.body}` : String(a.status)));
  return { seen, closed: r.closed };
}

t.test('a valid request followed by a malformed one gets its answer, then the 400, in that order', async (t) => {
  // It was a race: run it often enough to see it (bounded).
  const wrong: string[] = [];
  for (let i = 0; i < 50; i++) {
    const r = await answers(`POST /f8-${i} HTTP/1.1\r\nHost: a.com\r\nContent-Length: 5\r\n\r\nhelloGARBAGE\r\n\r\n`);
    const expected = [`200 origin:POST /f8-${i}`, '400'];
    if (JSON.stringify(r.seen) !== JSON.stringify(expected) || !r.closed) wrong.push(`run ${i}: ${JSON.stringify(r.seen)} closed=${r.closed}`);
  }
  t.strictSame(wrong, [], 'every run: the 200 for the POST, then 400, then the connection closed');
  t.equal(origin.seen.filter((s) => s.url.startsWith('/f8-') && s.body.toString() === 'hello').length, 50, 'the origin got each POST with its body');
});

t.test('two pipelined requests before a malformed one are both answered before the 400', async (t) => {
  const r = await answers('GET /p1 HTTP/1.1\r\nHost: a.com\r\n\r\nGET /p2 HTTP/1.1\r\nHost: a.com\r\n\r\nG{T / HTTP/1.1\r\n\r\n');
  t.strictSame(r.seen, ['200 origin:GET /p1', '200 origin:GET /p2', '400']);
  t.ok(r.closed);
});

t.test('a request whose body turns out malformed gets the 400 after the answers before it', async (t) => {
  const r = await answers('GET /b1 HTTP/1.1\r\nHost: a.com\r\n\r\n' +
    'POST /b2 HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nZZ\r\n');
  t.strictSame(r.seen, ['200 origin:GET /b1', '400']);
  t.ok(r.closed);
  t.equal(origin.count('/b2'), 0, 'the broken request never completed at the origin');
});

t.test('a request pipelined behind an Upgrade request is answered too, in order', async (t) => {
  const wrong: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await answers(`GET /u1-${i} HTTP/1.1\r\nHost: a.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n` +
      `GET /u2-${i} HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n`);
    const expected = [`200 origin:GET /u1-${i}`, `200 origin:GET /u2-${i}`];
    if (JSON.stringify(r.seen) !== JSON.stringify(expected) || !r.closed) wrong.push(`run ${i}: ${JSON.stringify(r.seen)} closed=${r.closed}`);
  }
  t.strictSame(wrong, [], 'every run: both answers, in order, then the close the last one asked for');
  const first = origin.seen.find((s) => s.url === '/u1-0');
  t.equal(first?.headers.upgrade, undefined, 'the origin never sees the Upgrade field');
});

t.test('an Upgrade request behind a pending answer, and one with a body, are answered in order', async (t) => {
  const r = await answers('GET /w0 HTTP/1.1\r\nHost: a.com\r\n\r\n' +
    'POST /w1 HTTP/1.1\r\nHost: a.com\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Length: 5\r\n\r\nhello' +
    'GET /w2 HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n');
  t.strictSame(r.seen, ['200 origin:GET /w0', '200 origin:POST /w1', '200 origin:GET /w2']);
  t.ok(r.closed);
  t.equal(origin.seen.find((s) => s.url === '/w1')?.body.toString(), 'hello', 'the Upgrade request kept its body');
});

t.test('nothing pipelined behind a request refused with 400 and Connection: close reaches the origin', async (t) => {
  const refused = [
    // A GET or HEAD with content (the body is never read as a request), two Host fields.
    (i: number) => `GET /obj/g1-${i} HTTP/1.1\r\nHost: one.com\r\nContent-Length: 3\r\n\r\nabc`,
    (i: number) => `HEAD /obj/h1-${i} HTTP/1.1\r\nHost: one.com\r\nContent-Length: 3\r\n\r\nabc`,
    (i: number) => `GET /obj/d1-${i} HTTP/1.1\r\nHost: one.com\r\nHost: one.com\r\n\r\n`,
  ];
  for (const [i, first] of refused.entries()) {
    const r = await rawRequest(port, `${first(i)}POST /echo/x-${i} HTTP/1.1\r\nHost: one.com\r\nContent-Length: 5\r\n\r\nhello` +
      `GET /behind-${i} HTTP/1.1\r\nHost: one.com\r\n\r\n`);
    // (The answer to HEAD has no body, which splitResponses cannot tell: the status lines are counted.)
    t.equal(r.status, 400, `case ${i}: refused`);
    t.equal(r.text.split('HTTP/1.1 ').length - 1, 1, `case ${i}: the refusal is the only answer`);
    t.ok(r.closed, `case ${i}: the connection closed`);
    // The one origin connection serves in order: once a request sent after the refusal was seen,
    // any request made before it would have been seen too.
    t.equal((await rawRequest(port, `GET /marker-${i} HTTP/1.1\r\nHost: one.com\r\nConnection: close\r\n\r\n`)).status, 200);
    t.equal(origin.count(`/marker-${i}`), 1);
    t.equal(origin.count(`/echo/x-${i}`) + origin.count(`/behind-${i}`), 0, `case ${i}: the pipelined requests never reached the origin`);
  }
});

/** A kept-alive connection: it is still answered later only if the worker is still the same. */
function witness(): { ask(path: string): Promise<number>; close(): void } {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  let wake: () => void = () => undefined;
  socket.on('data', (d: Buffer) => { text += d.toString('latin1'); wake(); });
  socket.on('close', () => wake());
  return {
    async ask(path) {
      const before = splitResponses(text).length;
      if (!socket.destroyed) socket.write(`GET ${path} HTTP/1.1\r\nHost: a.com\r\n\r\n`);
      for (let i = 0; i < 1000; i++) {
        const got = splitResponses(text);
        if (got.length > before) return got[before]!.status;
        if (socket.destroyed) return 0;
        await new Promise<void>((r) => { wake = r; });
      }
      return 0;
    },
    close: () => socket.destroy(),
  };
}

t.test('a client that resets while its Upgrade request waits behind an answer does not take the worker down', async (t) => {
  const w = witness();
  t.equal(await w.ask('/witness-before'), 200);
  const seen = new Promise<void>((r) => { heldSeen = r; });
  const closed = new Promise<void>((r) => { heldClosed = r; });
  // A POST passes through: its origin request is dropped as soon as the server sees the reset.
  const socket = net.connect(port, '127.0.0.1', () => socket.write('POST /held HTTP/1.1\r\nHost: a.com\r\nContent-Length: 0\r\n\r\n' +
    'GET /u HTTP/1.1\r\nHost: a.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /v HTTP/1.1\r\nHost: a.com\r\n\r\n'));
  socket.on('error', () => undefined);
  await seen;
  socket.resetAndDestroy();
  await closed;
  t.equal(await w.ask('/witness-after'), 200, 'the connection opened before is still served: same worker');
  w.close();
});
