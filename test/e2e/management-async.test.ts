// Black-box: asynchronous invalidation, its queue, and pre-cache control.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  if (req.headers['if-none-match'] === '"a"') { res.writeHead(304, { etag: '"a"', 'cache-control': 'max-age=600' }); res.end(); return; }
  const body = `${req.url}`;
  res.writeHead(200, { etag: '"a"', 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const server = await startServer([
  { name: 'q.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  { name: 'q2.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
], { extra: { env: { management: { api: { asyncInterval: 3000, asyncQueueMax: 3 } } } } });
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
/** Polls (bounded) until the queue is empty; the number of commands still waiting. */
const drained = async (): Promise<number> =>
  pollUntil(async () => (await api('/monitoring/asynctrl/actives')).json.result.queue.used as number, (used) => used === 0, { timeoutMs: 12_000, intervalMs: 100 });

t.test('a queued purge is listed, and its content is served as if it had run already', async (t) => {
  await get('/q/1'); t.equal(await get('/q/1'), 'TCP_HIT');
  const r = await api('/command/async/purge?url=q.com/q/1');
  t.equal(r.status, 200);
  t.match(r.json.result, { queued: true, queue: { used: 1 } });
  const actives = await api('/monitoring/asynctrl/actives?detail=true');
  t.match(actives.json.result, { queue: { used: 1, max: 3 }, prectrl: { firstonly: false } });
  t.match(actives.json.result.vhosts[0], { name: 'q.com', prectrl: { enable: true, used: 1, list: [{ command: 'purge', url: 'q.com/q/1' }] } });
  t.match(actives.json.result.vhosts[0].prectrl.list[0].timestamp, /^\d{4}-\d\d-\d\dT/);
  t.equal(await get('/q/1'), 'TCP_REFRESH_MISS', 'fetched anew while the purge waits');
  // The queued command then runs (3 s later: long enough that a loaded machine still asks before it runs) and the queue empties.
  t.equal(await drained(), 0);
});

t.test('asynctrl/reset clears the queue; prectrl/reset stops pre-cache control for a host', async (t) => {
  await get('/q/2'); await get('/q/3');
  await api('/command/async/expire?url=q.com/q/2');
  await api('/command/async/purge?url=q.com/q/3');
  t.equal((await api('/monitoring/asynctrl/actives')).json.result.queue.used, 2);
  const pr = await api('/command/async/asynctrl/prectrl/reset?vhost=q.com');
  t.equal(pr.status, 200);
  t.equal(await get('/q/3'), 'TCP_HIT', 'without pre-cache control the cached copy serves until the command runs');
  t.equal((await api('/monitoring/asynctrl/actives?detail=true')).json.result.vhosts[0].prectrl.enable, false);
  const reset = await api('/command/async/asynctrl/reset');
  t.equal(reset.status, 200);
  t.equal((await api('/monitoring/asynctrl/actives')).json.result.queue.used, 0);
  t.equal((await api('/command/async/asynctrl/prectrl/reset')).status, 400, 'vhost is required');
  t.equal((await api('/command/async/asynctrl/prectrl/reset?vhost=nope.com')).status, 404);
});

const asked = (path: string) => origin.seen.filter((s) => s.url === path);

t.test('a copy refreshed while its purge waits is served from cache and not purged again when the purge runs', async (t) => {
  await api('/command/async/asynctrl/reset');
  await get('/q/8');
  await api('/command/async/purge?url=q.com/q/8');
  t.equal(await get('/q/8'), 'TCP_REFRESH_MISS', 'the first request fetches anew');
  t.equal(await get('/q/8'), 'TCP_HIT', 'the next one is a hit on the fresh copy');
  t.equal(await drained(), 0, 'the queued purge has run');
  t.equal(await get('/q/8'), 'TCP_HIT', 'and left the fresh copy alone');
  t.equal(asked('/q/8').length, 2, 'the origin was asked twice in all: the first fill and one refresh');
});

t.test('a queued expire makes the next request revalidate; a queued hardpurge makes it a full miss', async (t) => {
  await api('/command/async/asynctrl/reset');
  await get('/q/e'); await get('/q/h');
  await api('/command/async/expire?url=q.com/q/e');
  await api('/command/async/hardpurge?url=q.com/q/h');
  t.equal(await get('/q/e'), 'TCP_REFRESH_HIT');
  t.equal(asked('/q/e')[1]!.headers['if-none-match'], '"a"', 'asked conditionally');
  t.equal(await get('/q/h'), 'TCP_MISS');
  t.equal(asked('/q/h')[1]!.headers['if-none-match'], undefined, 'fetched in full');
  await api('/command/async/asynctrl/reset');
});

t.test('a full queue refuses the command with 503 and queues nothing', async (t) => {
  await api('/command/async/asynctrl/reset');
  for (const n of [1, 2, 3]) t.equal((await api(`/command/async/purge?url=q.com/full/${n}`)).status, 200);
  const full = await api('/command/async/purge?url=q.com/full/4');
  t.equal(full.status, 503);
  t.match(full.json, { method: 'purge', status: 'fail', result: null, reason: /queue full \(3\)/ });
  const listed = (await api('/monitoring/asynctrl/actives?detail=true')).json.result;
  t.equal(listed.queue.used, 3);
  t.notOk(listed.vhosts[0].prectrl.list.some((e: { url: string }) => e.url.endsWith('/full/4')));
  await api('/command/async/asynctrl/reset');
});

t.test('vhosts= limits the overview to the hosts named', async (t) => {
  await api('/command/async/asynctrl/reset');
  await api('/command/async/purge?url=q.com/only');
  const one = (await api('/monitoring/asynctrl/actives?vhosts=q2.com&detail=true')).json.result;
  t.same(one.vhosts, [{ name: 'q2.com', prectrl: { enable: true, used: 0, max: 3, list: [] } }]);
  t.equal(one.queue.used, 1, 'the queue itself is the whole node');
  const both = (await api('/monitoring/asynctrl/actives?vhosts=q.com,q2.com,nope.com')).json.result;
  t.same(both.vhosts.map((v: { name: string; prectrl: { used: number } }) => [v.name, v.prectrl.used]), [['q.com', 1], ['q2.com', 0]]);
  await api('/command/async/asynctrl/reset');
});

t.test('POST /command/async/expire queues the targets of its form body; without a form body it is refused 400 and queues nothing', async (t) => {
  await api('/command/async/asynctrl/reset');
  const post = async (body: string, type?: string) => {
    const r = await request(`http://127.0.0.1:${server.apiPort}/command/async/expire`, {
      method: 'POST', body, headers: type === undefined ? {} : { 'content-type': type },
    });
    return { status: r.statusCode, json: await r.body.json() as Record<string, any> };
  };
  const bad = await post('url=q.com/form/1', 'application/json');
  t.equal(bad.status, 400);
  t.match(bad.json, { method: 'expire', status: 'fail', reason: /x-www-form-urlencoded/ });
  t.equal((await api('/monitoring/asynctrl/actives')).json.result.queue.used, 0, 'nothing queued');
  const good = await post(`url=${encodeURIComponent('q.com/form/1|/form/2')}`, 'application/x-www-form-urlencoded');
  t.equal(good.status, 200);
  t.match(good.json.result, { queued: true, queue: { used: 1 } });
  const list = (await api('/monitoring/asynctrl/actives?detail=true')).json.result.vhosts[0].prectrl.list;
  t.match(list, [{ command: 'expire', url: 'q.com/form/1|/form/2' }]);
  await api('/command/async/asynctrl/reset');
});
