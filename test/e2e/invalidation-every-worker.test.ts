// Black-box, two workers: once an invalidation is answered, on whichever worker or the management
// API, the next request through every worker gets the new copy. Each worker is addressed on its
// own internal port (base port + index), so every round asks both, not whichever the kernel picks.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';

const HOST = 'every.test';
const ROUNDS = 50;
// The internal ports take only requests marked with the node's sibling secret: the test fixes it.
const SECRET = 'invalidation-test-secret';
let version = 1;
const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  if (req.method !== 'GET') { version++; res.writeHead(204); res.end(); return; }
  const body = `${req.url} v${version}`;
  // Each object is tagged with its path (Surrogate-Key), for the purges by tag.
  res.writeHead(200, { etag: `"v${version}"`, 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body), 'surrogate-key': `key${req.url}` });
  res.end(body);
});
const port = await freePort();
const server = await startServer([{
  name: HOST, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  functions: { network: { cache: { enablePurgeMethod: true } } },
}], { workers: 2, env: { SVC_SIBLING_SECRET: SECRET } });
t.teardown(async () => { await server.stop(); await origin.stop(); });

const workerPorts = [server.basePort, server.basePort + 1];

const send = async (toPort: number, path: string, method: 'GET' | 'POST' | 'PURGE' = 'GET', extra: Record<string, string> = {}) => {
  const r = await request(`http://127.0.0.1:${toPort}${path}`, { method, headers: { host: HOST, 'x-svc-sibling': `test:${SECRET}`, ...extra }, body: method === 'POST' ? 'x' : undefined });
  return { status: r.statusCode, body: await r.body.text(), cache: String(r.headers['x-cache']) };
};

/**
 * Rounds of: every worker holds the current copy in memory, the origin's content changes, one
 * invalidation is answered, then every worker is asked once. Resolves to what was served old.
 */
async function rounds(path: string, invalidate: (round: number) => Promise<number>, n: number): Promise<string[]> {
  const old: string[] = [];
  for (let round = 0; round < n; round++) {
    for (const p of workerPorts) {
      await send(p, path);
      const warm = await send(p, path);
      if (warm.cache !== 'TCP_HIT') old.push(`round ${round}: worker on ${p} did not hold the copy (${warm.cache})`);
    }
    const status = await invalidate(round);
    if (status >= 300) old.push(`round ${round}: invalidation answered ${status}`);
    const expected = `${path} v${version}`;
    for (const p of workerPorts) {
      const r = await send(p, path);
      if (r.body !== expected) old.push(`round ${round}: worker on ${p} served "${r.body}" (${r.cache}), not "${expected}"`);
    }
  }
  return old;
}

t.test(`after a PURGE is answered by one worker, the next request through every worker gets the new copy (${ROUNDS} rounds)`, async (t) => {
  const old = await rounds('/purged', async (round) => {
    version++;
    return (await send(workerPorts[round % 2]!, '/purged', 'PURGE')).status;
  }, ROUNDS);
  t.same(old, [], 'no worker served the purged copy');
});

t.test(`after a POST is answered by one worker, the next request through every worker gets the new copy (${ROUNDS} rounds)`, async (t) => {
  // The origin's content changes with the POST itself.
  const old = await rounds('/posted', async (round) => (await send(workerPorts[round % 2]!, '/posted', 'POST')).status, ROUNDS);
  t.same(old, [], 'no worker served the replaced copy');
});

t.test('after a purge command is answered by the management API, the next request through every worker gets the new copy (20 rounds)', async (t) => {
  const old = await rounds('/commanded', async () => {
    version++;
    const r = await request(`http://127.0.0.1:${server.apiPort}/command/purge?url=${HOST}/commanded`);
    await r.body.text();
    return r.statusCode;
  }, 20);
  t.same(old, [], 'no worker served the purged copy');
});

t.test('after a purge by tag is answered by the management API, the next request through every worker gets the new copy (20 rounds)', async (t) => {
  const old = await rounds('/tagged', async () => {
    version++;
    const r = await request(`http://127.0.0.1:${server.apiPort}/command/purge?tag=key/tagged`);
    await r.body.text();
    return r.statusCode;
  }, 20);
  t.same(old, [], 'no worker served the purged copy');
});

t.test('after a PURGE naming a tag is answered by one worker, the next request through every worker gets the new copy (20 rounds)', async (t) => {
  const old = await rounds('/tag-purged', async (round) => {
    version++;
    return (await send(workerPorts[round % 2]!, '/elsewhere', 'PURGE', { 'surrogate-key': 'key/tag-purged' })).status;
  }, 20);
  t.same(old, [], 'no worker served the purged copy');
});
