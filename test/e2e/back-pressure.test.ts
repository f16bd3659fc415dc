// Black-box: a client that reads slowly holds the origin back. The server streams with
// back-pressure, so the origin's writes stall instead of the worker buffering the whole body.
import net from 'node:net';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const TOTAL = 64 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'b');
let written = 0;
let finished = false;
const origin = await new TestOrigin().on('/big', (_q, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(TOTAL), 'cache-control': 'no-store' });
  const pump = (): void => {
    while (written < TOTAL) {
      written += CHUNK.length;
      if (!res.write(CHUNK)) { res.once('drain', pump); return; }
    }
    finished = true;
    res.end();
  };
  pump();
}).start();
const port = await freePort();
const server = await startServer([{ name: 'bp.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

t.test('a client that stops reading a 64 MiB answer stalls the origin; reading on delivers every byte', async (t) => {
  const socket = net.connect(port, '127.0.0.1');
  let received = 0;
  socket.on('data', (c: Buffer) => { received += c.length; });
  socket.write('GET /big HTTP/1.1\r\nHost: bp.com\r\nConnection: close\r\n\r\n');
  // Take the first bytes, then stop reading.
  t.ok(await waitFor(() => received > 0, { timeoutMs: 10_000 }), 'the answer begins');
  socket.pause();
  // Wait until the origin's writes stop advancing: two looks 200 ms apart see the same count
  // (a stall has no event to wait for; the window is what "stopped" means here).
  let last = -1;
  await waitFor(() => { const same = written === last; last = written; return same; }, { timeoutMs: 10_000, intervalMs: 200 });
  t.equal(written, last, 'the origin stopped writing while the client did not read');
  t.notOk(finished, 'the origin could not finish');
  t.ok(written < TOTAL / 2, `only ${(written / 1048576).toFixed(1)} MiB left the origin (socket buffers), not the whole body`);

  socket.resume();
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  const timer = setTimeout(() => socket.destroy(), 30000);
  await closed;
  clearTimeout(timer);
  t.ok(finished, 'the origin finished once the client read on');
  t.ok(received > TOTAL, `every body byte arrived (${received} bytes with the head)`);
});
