// frontEnd.keepAliveTimeout on the service listeners (service-server.ts keeps it itself, not
// node's per-connection timer): an idle keep-alive connection is closed once the timeout and a
// second have passed, its answers say the timeout, and a connection in use stays open.
// In-process: one ServiceServer answering every request, raw sockets as clients.
import net from 'node:net';
import t from 'tap';
import { ServiceServer } from '../../lib/worker/service-server.js';
import { bindDirectly } from '../../lib/worker/listen-handle.js';
import { freePort } from '../helpers/ports.js';
import { within } from '../helpers/wait.js';

const KEEP_ALIVE_MS = 1000;
const s = new ServiceServer((_req, res) => { res.writeHead(200, { 'content-length': '2' }); res.end('ok'); },
  { keepAliveMs: KEEP_ALIVE_MS, headersMs: 10_000, requestMs: 10_000, maxHeaderSize: 16_384 });
const port = await freePort();
await s.listen(bindDirectly, '127.0.0.1', port);
t.teardown(() => s.drain(1000));

/** A client connection: requests one at a time, each answer read whole (2-byte bodies). */
class Client {
  readonly socket: net.Socket;
  readonly closed: Promise<number>;
  private got = '';
  private wake: (() => void) | undefined;

  constructor() {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (c: Buffer) => { this.got += c.toString('latin1'); this.wake?.(); });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((ok) => this.socket.on('close', () => ok(Date.now())));
  }

  async request(): Promise<string> {
    this.got = '';
    this.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    while (!/\r\n\r\nok$/.test(this.got)) await within(new Promise<void>((ok) => { this.wake = ok; }), 3000, 'an answer');
    return this.got;
  }
}

t.test('an idle keep-alive connection is closed once the timeout and a second have passed', async (t) => {
  const c = new Client();
  const answer = await c.request();
  const answered = Date.now();
  t.match(answer, /\r\nKeep-Alive: timeout=1\r\n/, 'the answer says the timeout');
  const closedAt = await within(c.closed, 5000, 'the idle connection to close');
  t.ok(closedAt - answered >= KEEP_ALIVE_MS, `closed after ${closedAt - answered} ms, not before the timeout`);
});

t.test('a keep-alive connection in use stays open while the sweep closes an idle one', async (t) => {
  // The idle connection's close is the sweep having run past the timeout: the busy connection,
  // used back to back until then (no fixed pauses), must have been left open by the same sweep.
  const idle = new Client();
  await idle.request();
  let idleOpen = true;
  void idle.closed.then(() => { idleOpen = false; });
  const busy = new Client();
  let busyOpen = true;
  void busy.closed.then(() => { busyOpen = false; });
  const start = Date.now();
  let requests = 0;
  for (; idleOpen && requests < 200_000 && Date.now() - start < 6000; requests++) await busy.request();
  t.notOk(idleOpen, `the idle connection was closed (after ${Date.now() - start} ms)`);
  t.ok(Date.now() - start >= KEEP_ALIVE_MS, 'the busy connection was used past the timeout');
  t.ok(busyOpen, `the busy connection is still open after ${requests} requests`);
  await busy.request();
  t.pass('and it still answers');
  busy.socket.destroy();
});
