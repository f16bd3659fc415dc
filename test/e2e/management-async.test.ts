// Black-box: asynchronous invalidation, its queue, and pre-cache control.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';

const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  const body = `${req.url}`;
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const server = await startServer([{ name: 'q.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
  { extra: { env: { management: { api: { asyncInterval: 1500 } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); });

const get = async (path: string) => {
  const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: 'q.com' } });
  await r.body.text();
  return String(r.headers['x-cache']);
};
const api = async (path: string) => {
  const r = await request(`http://127.0.0.1:${server.apiPort}${path}`);
  return { status: r.statusCode, json: await r.body.json() as Record<string, any> };
};

t.test('a queued purge is listed, and its content is served as if it had run already', async (t) => {
  await get('/q/1'); t.equal(await get('/q/1'), 'TCP_HIT');
  const r = await api('/command/async/purge?url=q.com/q/1');
  t.equal(r.status, 200);
  t.match(r.json.result, { queued: true, queue: { used: 1 } });
  const actives = await api('/monitoring/asynctrl/actives?detail=true');
  t.match(actives.json.result, { queue: { used: 1, max: 10000 }, prectrl: { firstonly: false } });
  t.match(actives.json.result.vhosts[0], { name: 'q.com', prectrl: { enable: true, used: 1, list: [{ command: 'purge', url: 'q.com/q/1' }] } });
  t.match(actives.json.result.vhosts[0].prectrl.list[0].timestamp, /^\d{4}-\d\d-\d\dT/);
  t.equal(await get('/q/1'), 'TCP_REFRESH_MISS', 'fetched anew while the purge waits');
  // The queued command then runs (1.5 s later) and the queue empties.
  let used = 1;
  for (let i = 0; i < 40 && used > 0; i++) { await new Promise((r) => setTimeout(r, 100)); used = (await api('/monitoring/asynctrl/actives')).json.result.queue.used; }
  t.equal(used, 0);
});

t.test('asynctrl/reset clears the queue; prectrl/reset stops pre-cache control for a host', async (t) => {
  await get('/q/2'); await get('/q/3');
  await api('/command/async/expire?url=q.com/q/2');
  await api('/command/async/purge?url=q.com/q/3');
  t.equal((await api('/monitoring/asynctrl/actives')).json.result.queue.used, 2);
  const pr = await api('/command/async/asynctrl/prectrl/reset?vhost=q.com');
  t.equal(pr.status, 200);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(await get('/q/3'), 'TCP_HIT', 'without pre-cache control the cached copy serves until the command runs');
  t.equal((await api('/monitoring/asynctrl/actives?detail=true')).json.result.vhosts[0].prectrl.enable, false);
  const reset = await api('/command/async/asynctrl/reset');
  t.equal(reset.status, 200);
  t.equal((await api('/monitoring/asynctrl/actives')).json.result.queue.used, 0);
  t.equal((await api('/command/async/asynctrl/prectrl/reset')).status, 400, 'vhost is required');
  t.equal((await api('/command/async/asynctrl/prectrl/reset?vhost=nope.com')).status, 404);
});
