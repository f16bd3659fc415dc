// A cookie is one client's state: a shared cache that stores Set-Cookie hands one visitor's
// session to every later visitor. By default the shared copy is stored without it (the client
// whose request fetched the response still gets its cookie); an operator can keep it with
// functions.network.cache.storeSetCookie.
import http from 'node:http';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { startServer } from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';
import { reply } from './fixtures/bench.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([
  { name: 'shared.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  {
    name: 'keeps.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { network: { cache: { storeSetCookie: true } } },
  },
]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

async function get(host: string, path: string): Promise<{ headers: http.IncomingHttpHeaders; body: string }> {
  const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host }, headersTimeout: 10_000, bodyTimeout: 10_000 });
  return { headers: r.headers as http.IncomingHttpHeaders, body: await r.body.text() };
}

t.test('by default a stored answer keeps its Set-Cookie for the fetching client only: coalesced clients and hits get none', async (t) => {
  let release = (): void => undefined;
  origin.on('/login', (q, res) => {
    release = () => reply(200, { 'cache-control': 'max-age=60', 'set-cookie': ['session=alice', 'theme=dark'] }, 'welcome')(q, res);
  });
  const first = get('shared.test', '/login');
  await until(() => origin.count('/login') === 1, 'the fetch of /login under way');
  const coalesced = get('shared.test', '/login');
  release();
  const a = await first;
  t.same(a.headers['set-cookie'], ['session=alice', 'theme=dark'], 'the client whose request fetched it gets its cookies');
  const b = await coalesced;
  t.equal(b.body, 'welcome');
  t.equal(b.headers['set-cookie'], undefined, 'a client that shared the fetch does not get them');
  const hit = await get('shared.test', '/login');
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.equal(hit.body, 'welcome');
  t.equal(hit.headers['set-cookie'], undefined, 'a later client gets the stored copy without them');
  t.equal(origin.count('/login'), 1, 'the answer is still cached and shared');
});

t.test('by default a Set-Cookie on a 304 that freshens the stored copy is not stored either', async (t) => {
  origin.on('/refreshed', (q, res) => {
    if (q.headers['if-none-match'] === '"r"') {
      res.writeHead(304, { etag: '"r"', 'cache-control': 'max-age=60', 'set-cookie': 'session=bob' });
      res.end();
      return;
    }
    reply(200, { etag: '"r"', 'cache-control': 'max-age=0' }, 'refreshed')(q, res);
  });
  await get('shared.test', '/refreshed');
  const revalidated = await get('shared.test', '/refreshed');
  t.equal(revalidated.headers['x-cache'], 'TCP_REFRESH_HIT');
  const hit = await get('shared.test', '/refreshed');
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.equal(hit.headers['set-cookie'], undefined);
});

t.test('with storeSetCookie the stored copy keeps Set-Cookie and every hit carries it', async (t) => {
  origin.on('/kept', reply(200, { 'cache-control': 'max-age=60', 'set-cookie': 'region=eu' }, 'kept'));
  t.equal((await get('keeps.test', '/kept')).headers['set-cookie'], 'region=eu');
  const hit = await get('keeps.test', '/kept');
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.equal(hit.headers['set-cookie'], 'region=eu');
});
