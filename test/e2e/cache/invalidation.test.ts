// RFC 9111 4.4: an unsafe request that succeeds invalidates the target URI and the Location /
// Content-Location URIs of the same host; unsafe methods pass through to the origin untouched.
import t, { type Test } from 'tap';
import { cacheBench, reply } from './fixtures/bench.js';

const { origin, get } = await cacheBench();
const cached = (path: string, body = `cached ${path}`) => origin.on(path, (q, res) => {
  if (q.method === 'GET') reply(200, { 'cache-control': 'max-age=600' }, body)(q, res);
  else reply(200, {}, `${q.method} done`)(q, res);
});
const gets = (path: string): number => origin.seen.filter((s) => s.url === path && s.method === 'GET').length;

/** Fills the cache for `path` and checks that the second GET is a hit. */
async function warm(t: Test, path: string): Promise<void> {
  await get(path);
  t.equal((await get(path)).headers['x-cache'], 'TCP_HIT', `${path} is cached`);
}

for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
  t.test(`a successful ${method} invalidates the target URI: the next GET goes to the origin`, async (t) => {
    const path = `/inv/${method}`;
    cached(path);
    await warm(t, path);
    const r = await get(path, { 'content-type': 'text/plain' }, { method, body: `payload of ${method}` });
    t.equal(r.status, 200);
    t.equal(r.body, `${method} done`);
    const after = await get(path);
    t.not(after.headers['x-cache'], 'TCP_HIT');
    t.equal(gets(path), 2, 'the GET after the change reached the origin');
  });
}

t.test('a 3xx answer to an unsafe method invalidates as well', async (t) => {
  const path = '/inv/303';
  origin.on(path, (q, res) => q.method === 'GET'
    ? reply(200, { 'cache-control': 'max-age=600' }, 'x')(q, res)
    : reply(303, { location: '/elsewhere' }, '')(q, res));
  await warm(t, path);
  await get(path, {}, { method: 'POST', body: 'x' });
  await get(path);
  t.equal(gets(path), 2);
});

t.test('Location and Content-Location on the same host are invalidated; another host is not', async (t) => {
  cached('/inv/loc');
  cached('/inv/cloc');
  cached('/inv/foreign');
  origin.on('/inv/create', reply(201, { location: '/inv/loc', 'content-location': `http://cache.test/inv/cloc` }, 'created'));
  origin.on('/inv/create-foreign', reply(201, { location: 'http://other.test/inv/foreign' }, 'created'));
  for (const p of ['/inv/loc', '/inv/cloc', '/inv/foreign']) await warm(t, p);
  t.equal((await get('/inv/create', {}, { method: 'POST', body: 'new' })).status, 201);
  t.equal((await get('/inv/create-foreign', {}, { method: 'POST', body: 'new' })).status, 201);
  await get('/inv/loc');
  await get('/inv/cloc');
  t.equal(gets('/inv/loc'), 2, 'Location invalidated');
  t.equal(gets('/inv/cloc'), 2, 'Content-Location invalidated');
  t.equal((await get('/inv/foreign')).headers['x-cache'], 'TCP_HIT', 'a URI of another host is left alone');
  t.equal(gets('/inv/foreign'), 1);
});

t.test('a failed POST (500) does not invalidate', async (t) => {
  const path = '/inv/failed';
  origin.on(path, (q, res) => q.method === 'GET'
    ? reply(200, { 'cache-control': 'max-age=600' }, 'still here')(q, res)
    : reply(500, {}, 'failed')(q, res));
  await warm(t, path);
  const r = await get(path, {}, { method: 'POST', body: 'x' });
  t.equal(r.status, 500);
  const after = await get(path);
  t.equal(after.headers['x-cache'], 'TCP_HIT');
  t.equal(after.body, 'still here');
  t.equal(gets(path), 1);
});

t.test('unsafe methods pass through with their method, fields and body untouched, and are never cached', async (t) => {
  const path = '/inv/echo';
  origin.on(path, (q, res) => reply(200, { 'cache-control': 'max-age=600' }, `echo ${q.method} ${q.body.toString()}`)(q, res));
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
    const body = JSON.stringify({ method, n: 1 });
    const r = await get(path, { 'content-type': 'application/json', 'x-custom': method }, { method, body });
    t.equal(r.body, `echo ${method} ${body}`);
    const seen = origin.seen.filter((s) => s.url === path).at(-1)!;
    t.equal(seen.method, method);
    t.equal(seen.body.toString(), body);
    t.equal(seen.headers['content-type'], 'application/json');
    t.equal(seen.headers['x-custom'], method);
    t.equal(seen.headers['content-length'], String(Buffer.byteLength(body)));
  }
  const again = await get(path, {}, { method: 'POST', body: 'again' });
  t.equal(again.body, 'echo POST again', 'a POST answer with max-age is not reused');
  t.equal(origin.count(path), 5);
});

t.test('the GET sent right after a successful PUT is answered never with the replaced content (20 rounds)', async (t) => {
  const path = '/inv/race';
  let version = 0;
  origin.on(path, (q, res) => {
    if (q.method === 'PUT') { version++; reply(204, {}, '')(q, res); return; }
    reply(200, { 'cache-control': 'max-age=600' }, `version ${version}`)(q, res);
  });
  let stale = 0;
  for (let i = 0; i < 20; i++) {
    await get(path);
    await get(path, {}, { method: 'PUT', body: `v${i}` });
    const r = await get(path);
    if (r.body !== `version ${version}`) stale++;
  }
  t.equal(stale, 0, `every GET after a PUT saw the new version (${stale} of 20 got the old one)`);
});
