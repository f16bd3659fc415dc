// Black-box: an invalidation made by one worker reaches the memory copies of the others.
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';

t.test('a POST through one worker makes every worker revalidate the URL on its next GET', async (t) => {
  let version = 1;
  const origin = await new TestOrigin().start();
  origin.on('/doc', (req, res) => {
    if (req.method === 'POST') { version++; res.writeHead(204); res.end(); return; }
    const etag = `"v${version}"`;
    if (req.headers['if-none-match'] === etag) { res.writeHead(304, { etag, 'cache-control': 'max-age=600' }); res.end(); return; }
    const body = `version ${version}`;
    res.writeHead(200, { etag, 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  const port = await freePort();
  const server = await startServer([{ name: 'w.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
    { workers: 2, env: { SVC_DEBUG_HEADERS: '1' } });
  t.teardown(async () => { await server.stop(); await origin.stop(); });

  const get = async (): Promise<{ body: string; worker: string; cache: string }> => {
    const agent = new Agent({ pipelining: 0 });
    const r = await request(`http://127.0.0.1:${port}/doc`, { headers: { host: 'w.com' }, dispatcher: agent });
    const body = await r.body.text();
    await agent.close();
    return { body, worker: String(r.headers['x-svc-worker']), cache: String(r.headers['x-cache']) };
  };
  // Warm both workers' memory (new connections land on either worker).
  const warmed = new Set<string>();
  for (let i = 0; i < 40 && warmed.size < 2; i++) {
    const r = await get();
    t.equal(r.body, 'version 1');
    warmed.add(r.worker);
  }
  t.equal(warmed.size, 2, 'both workers hold the object');
  const before = origin.count('/doc');

  const post = await request(`http://127.0.0.1:${port}/doc`, { method: 'POST', headers: { host: 'w.com' }, body: 'x' });
  await post.body.text();
  t.equal(post.statusCode, 204);

  const seen = new Map<string, string>();
  for (let i = 0; i < 40 && seen.size < 2; i++) {
    const r = await get();
    if (!seen.has(r.worker)) seen.set(r.worker, r.body);
    t.equal(r.body, 'version 2', `worker ${r.worker} serves the new version (${r.cache})`);
  }
  t.equal(seen.size, 2, 'both workers answered after the POST');
  t.ok(origin.count('/doc') > before + 1, 'the origin was asked again after the POST');
});
