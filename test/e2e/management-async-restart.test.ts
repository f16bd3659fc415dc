// Black-box: a worker that starts while asynchronous commands wait (a rolling restart here; a
// worker that died and is replaced starts the same way) gets the waiting commands before it
// serves. It once heard of them only at the next change of the queue, and so served the old copy
// an acknowledged asynchronous purge names. The command waits long (asyncInterval 10 minutes):
// only pre-cache control can keep the copy from being served.
import t from 'tap';
import { request } from 'undici';
import { versionedOrigin } from './fixtures/fleet.js';
import { freePort } from '../helpers/ports.js';
import { primaryPids, startServer, workerPids } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

// Each answer a new version: a purged copy is told from the old one by its body.
const origin = await versionedOrigin(t);
const port = await freePort();
const server = await startServer([{ name: 'r.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
  { extra: { env: { management: { api: { asyncInterval: 600_000 } } } } });
t.teardown(() => server.stop());

const get = async (path: string): Promise<{ cache: string; body: string }> => {
  const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: 'r.com' } });
  return { body: await r.body.text(), cache: String(r.headers['x-cache']) };
};
const api = async (path: string): Promise<number> => {
  const r = await request(`http://127.0.0.1:${server.apiPort}${path}`);
  await r.body.text();
  return r.statusCode;
};

t.test('a worker restarted while an asynchronous purge waits does not serve the copy the purge names', async (t) => {
  const named = await get('/r/named');
  const other = await get('/r/other');
  t.equal((await get('/r/named')).cache, 'TCP_HIT');
  t.equal((await get('/r/other')).cache, 'TCP_HIT');
  t.equal(await api('/command/async/purge?url=r.com/r/named'), 200);
  const before = workerPids(server);
  t.equal(before.length, 1);
  process.kill(primaryPids(server)[0]!, 'SIGUSR2');
  await pollUntil(async () => workerPids(server), (pids) => pids.length === 1 && pids[0] !== before[0], { timeoutMs: 20_000, intervalMs: 100 });
  const after = await get('/r/named');
  t.not(after.cache, 'TCP_HIT', `the new worker fetched it anew (${after.cache})`);
  t.not(after.body, named.body, 'and served the new content');
  t.same(await get('/r/other'), { cache: 'TCP_HIT', body: other.body }, 'a copy no command names is still served from the cache');
  t.equal(await api('/command/async/asynctrl/reset'), 200);
});
