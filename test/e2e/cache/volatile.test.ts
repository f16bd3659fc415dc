// mode.volatile keeps content in memory only, except objects at or above mode.nonVolatileSize;
// a chunked answer (no Content-Length) is judged by the size its body reaches.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { startServer } from '../../helpers/server.js';
import { HOST } from './fixtures/bench.js';
import { waitFor } from '../../helpers/wait.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([{
  name: HOST, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  mode: { volatile: true, nonVolatileSize: '4kb' },
}]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** The origin answers in chunks of 1 KiB without Content-Length. */
function chunked(path: string, kib: number): void {
  origin.on(path, (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=600' });
    for (let i = 0; i < kib; i++) res.write(Buffer.alloc(1024, 97 + (i % 26)));
    res.end();
  });
}

async function get(path: string): Promise<{ status: number; size: number; cache: string }> {
  const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: HOST } });
  const body = Buffer.from(await r.body.arrayBuffer());
  return { status: r.statusCode, size: body.length, cache: String(r.headers['x-cache']) };
}

/** Whether fileinfo reports a disk copy of the URL. */
async function onDisk(path: string): Promise<boolean> {
  const r = await request(`http://127.0.0.1:${server.apiPort}/monitoring/fileinfo?url=${HOST}${path}`);
  const body = await r.body.json() as { result?: { LocalPath?: string }[] };
  return body.result?.some((rec) => rec.LocalPath !== undefined && rec.LocalPath !== '-') ?? false;
}

/** Polls (bounded) until fileinfo reports a disk copy of the URL, while the writer commits. */
const storedOnDisk = (path: string): Promise<boolean> => waitFor(() => onDisk(path), { timeoutMs: 5000, intervalMs: 50 });

t.test('a chunked answer that reaches nonVolatileSize is stored on disk', async (t) => {
  chunked('/big-chunked', 16);
  const first = await get('/big-chunked');
  t.equal(first.size, 16 * 1024);
  t.ok(await storedOnDisk('/big-chunked'), 'a disk copy exists');
  const hit = await get('/big-chunked');
  t.equal(hit.cache, 'TCP_HIT');
  t.equal(hit.size, 16 * 1024);
  t.equal(origin.count('/big-chunked'), 1);
});

t.test('a chunked answer below nonVolatileSize stays in memory only', async (t) => {
  chunked('/small-chunked', 2);
  t.equal((await get('/small-chunked')).size, 2048);
  const hit = await get('/small-chunked');
  t.equal(hit.cache, 'TCP_HIT', 'served from memory');
  // A large answer fetched after it goes to disk: once that one is there, a disk write of the
  // small one, had it been made, would be there too.
  chunked('/small-chunked-after', 16);
  await get('/small-chunked-after');
  t.ok(await storedOnDisk('/small-chunked-after'), 'the later large answer is on disk');
  t.notOk(await onDisk('/small-chunked'), 'no disk copy');
});
