// The cache is one for the node: an object stored by one worker is a hit in another, and the
// stored objects survive a restart of the whole server.
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { startServer, startWithSetting, type RunningServer } from '../../helpers/server.js';
import { HOST, reply } from './fixtures/bench.js';
import { pollUntil, waitFor } from '../../helpers/wait.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const env = { SVC_DEBUG_HEADERS: '1' };
let server: RunningServer = await startServer([{ name: HOST, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { workers: 2, env });
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** Waits (bounded) until the shared index has a disk record of the URL, as fileinfo reports it. */
function waitStored(path: string): Promise<boolean> {
  return waitFor(async () => {
    const r = await request(`http://127.0.0.1:${server.apiPort}/monitoring/fileinfo?url=${HOST}${path}`);
    const body = await r.body.json() as { result?: { LocalPath?: string }[] };
    return body.result?.some((rec) => rec.LocalPath !== undefined && rec.LocalPath !== '-') ?? false;
  }, { timeoutMs: 10_000, intervalMs: 50 });
}

/** A GET on a new connection, so the kernel may hand it to either worker. */
async function fresh(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; cache: string; worker: string }> {
  const dispatcher = new Agent({ pipelining: 0, keepAliveTimeout: 1 });
  try {
    const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: HOST, ...headers }, dispatcher, headersTimeout: 10000, bodyTimeout: 10000 });
    return { status: r.statusCode, body: await r.body.text(), cache: String(r.headers['x-cache']), worker: String(r.headers['x-svc-worker']) };
  } finally { await dispatcher.close(); }
}

t.test('an object stored by one worker is a hit in the other', async (t) => {
  origin.on('/shared', reply(200, { 'cache-control': 'max-age=600' }, 'one copy'));
  const first = await fresh('/shared');
  t.equal(first.cache, 'TCP_MISS');
  const storer = first.worker;
  t.ok(await waitStored('/shared'), 'the object reached the shared index');
  // A worker's directory of the index (lib/cache/disk/directory.ts) sees the rows another
  // process committed within one poll period (DIRECTORY_POLL_MS); a request in that window is a
  // miss. So the other worker is asked with only-if-cached (a 504 then, and no origin request)
  // until it answers from the store.
  const onlyIfCached = { 'cache-control': 'only-if-cached' };
  const other = await pollUntil(() => fresh('/shared', onlyIfCached), (r) => r.worker !== storer && r.status === 200, { timeoutMs: 10_000, intervalMs: 10 });
  t.not(other.worker, storer, 'a request reached the other worker');
  t.equal(other.body, 'one copy');
  t.equal(other.cache, 'TCP_HIT', `worker ${other.worker} found what worker ${storer} stored`);
  t.equal(origin.count('/shared'), 1);
});

t.test('the cache survives a restart of the whole server: the first request afterwards is a hit', async (t) => {
  origin.on('/durable', reply(200, { 'cache-control': 'max-age=600', etag: '"d"' }, 'still here'));
  t.equal((await fresh('/durable')).cache, 'TCP_MISS');
  t.ok(await waitStored('/durable'), 'the object reached the shared index');
  const { dir, settingPath, basePort } = server;
  t.equal(await server.stop(), 0, 'the first server stopped cleanly');
  server = await startWithSetting(dir, settingPath, basePort, env);
  const r = await fresh('/durable');
  t.equal(r.status, 200);
  t.equal(r.body, 'still here');
  t.equal(r.cache, 'TCP_HIT');
  t.equal(origin.count('/durable'), 1, 'the origin was not asked again');
});
