// Refreshing stale copies (RFC 9111 4.3): concurrent refreshes of one stored variant share one
// conditional origin request; a client of another Vary variant never receives the variant being
// refreshed; a 304 only freshens the copy whose validator it carries; an origin error never
// replaces a copy that can still be revalidated; must-revalidate with the origin down gives 504.
import t from 'tap';
import { cacheBench, reply } from './fixtures/bench.js';
import { waitFor } from '../../helpers/wait.js';

const { origin, get, untilStale } = await cacheBench();

t.test('20 concurrent requests on a stale object: one conditional origin request, all 20 get the body as TCP_REFRESH_HIT', async (t) => {
  origin.on('/stale-20', (q, res) => {
    if (q.headers['if-none-match'] === '"v1"') {
      setTimeout(() => { res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=60' }); res.end(); }, 300);
      return;
    }
    reply(200, { etag: '"v1"', 'cache-control': 'max-age=1' }, 'the body')(q, res);
  });
  await get('/stale-20');
  t.ok(await untilStale('/stale-20'));
  const answers = await Promise.all(Array.from({ length: 20 }, () => get('/stale-20')));
  t.equal(origin.count('/stale-20'), 2, 'one refresh for 20 clients');
  t.equal(answers.filter((a) => a.status === 200 && a.body === 'the body' && a.headers['x-cache'] === 'TCP_REFRESH_HIT').length, 20);
  t.equal((await get('/stale-20')).headers['x-cache'], 'TCP_HIT', 'fresh again');
});

t.test('a miss for another Vary variant during a refresh gets its own variant, not the refreshed one', async (t) => {
  origin.on('/vary-refresh', (q, res) => {
    const lang = String(q.headers['accept-language'] ?? 'none');
    if (q.headers['if-none-match'] === `"${lang}"`) {
      // The refresh is slow so the other variant's miss arrives while it is under way.
      setTimeout(() => { res.writeHead(304, { etag: `"${lang}"`, 'cache-control': 'max-age=60', vary: 'accept-language' }); res.end(); }, 400);
      return;
    }
    reply(200, { etag: `"${lang}"`, 'cache-control': lang === 'en' ? 'max-age=1' : 'max-age=60', vary: 'accept-language' }, `body in ${lang}`)(q, res);
  });
  t.equal((await get('/vary-refresh', { 'accept-language': 'en' })).body, 'body in en');
  t.ok(await untilStale('/vary-refresh', { 'accept-language': 'en' }));
  const refresh = get('/vary-refresh', { 'accept-language': 'en' });
  t.ok(await waitFor(() => origin.count('/vary-refresh') === 2), 'the refresh reached the origin');
  const other = await get('/vary-refresh', { 'accept-language': 'fr' });
  t.equal(other.body, 'body in fr', 'the fr client gets fr');
  t.equal(other.headers['x-cache'], 'TCP_MISS');
  const en = await refresh;
  t.equal(en.body, 'body in en');
  t.equal(en.headers['x-cache'], 'TCP_REFRESH_HIT');
});

t.test('a 304 whose ETag differs from the stored one does not freshen it: the content is fetched whole', async (t) => {
  let version = 1;
  origin.on('/mismatch', (q, res) => {
    if (q.headers['if-none-match'] !== undefined && version === 2) {
      // A broken origin (or a cache behind it) confirms another representation.
      res.writeHead(304, { etag: '"other"', 'cache-control': 'max-age=60' });
      res.end();
      return;
    }
    reply(200, { etag: `"v${version}"`, 'cache-control': version === 1 ? 'max-age=1' : 'max-age=60' }, `version ${version}`)(q, res);
  });
  t.equal((await get('/mismatch')).body, 'version 1');
  version = 2;
  t.ok(await untilStale('/mismatch'));
  const r = await get('/mismatch');
  t.equal(r.status, 200);
  t.equal(r.body, 'version 2', 'the old body is not served on the strength of a foreign 304');
  t.equal(origin.count('/mismatch'), 3, 'a conditional request, then a full one');
  t.equal(origin.seen.filter((s) => s.url === '/mismatch')[2]?.headers['if-none-match'], undefined, 'the second was unconditional');
});

t.test('a refresh answered 503 passes the 503 on but keeps the stored copy for the next revalidation', async (t) => {
  let failing = false;
  origin.on('/keep-on-5xx', (q, res) => {
    if (failing) { reply(503, { 'cache-control': 'max-age=60' }, 'overloaded')(q, res); return; }
    if (q.headers['if-none-match'] === '"k"') { res.writeHead(304, { etag: '"k"', 'cache-control': 'max-age=60' }); res.end(); return; }
    reply(200, { etag: '"k"', 'cache-control': 'max-age=1' }, 'kept')(q, res);
  });
  await get('/keep-on-5xx');
  t.ok(await untilStale('/keep-on-5xx'));
  failing = true;
  t.equal((await get('/keep-on-5xx')).status, 503);
  failing = false;
  const r = await get('/keep-on-5xx');
  t.equal(r.status, 200);
  t.equal(r.body, 'kept');
  t.equal(r.headers['x-cache'], 'TCP_REFRESH_HIT', 'revalidated the old copy');
  t.equal(origin.seen.filter((s) => s.url === '/keep-on-5xx').at(-1)?.headers['if-none-match'], '"k"');
});

t.test('must-revalidate: a stale copy whose origin is unreachable gives 504 (RFC 9111 5.2.2.2)', async (t) => {
  origin.on('/mr-down', (q, res) => {
    if (origin.count('/mr-down') > 1) { res.socket?.destroy(); return; }
    reply(200, { 'cache-control': 'max-age=1, must-revalidate', etag: '"m"' }, 'strict')(q, res);
  });
  await get('/mr-down');
  t.ok(await untilStale('/mr-down'));
  const r = await get('/mr-down');
  t.equal(r.status, 504, 'not the stale copy, and not 502');
  t.not(r.body, 'strict');
  t.equal(origin.count('/mr-down'), 2, 'the origin was tried');
});

t.test('s-maxage forbids stale-if-error: the origin error is passed on (RFC 9111 5.2.2.10)', async (t) => {
  origin.on('/smax-sie', (q, res) => {
    if (origin.count('/smax-sie') > 1) { reply(500, {}, 'broken')(q, res); return; }
    reply(200, { 'cache-control': 's-maxage=1, stale-if-error=60, stale-while-revalidate=60', etag: '"s"' }, 'shared')(q, res);
  });
  await get('/smax-sie');
  t.ok(await untilStale('/smax-sie'));
  const r = await get('/smax-sie');
  t.equal(r.status, 500, 'neither stale-while-revalidate nor stale-if-error served the stale copy');
  t.equal(origin.count('/smax-sie'), 2);
});

t.test('a client max-age=0 that leads to a full refetch is recorded as TCP_CLIENT_REFRESH_MISS', async (t) => {
  let version = 1;
  origin.on('/client-refresh', (q, res) => reply(200, { 'cache-control': 'max-age=60' }, `v${version++}`)(q, res));
  await get('/client-refresh');
  t.ok(await waitFor(async () => (await get('/client-refresh', { 'cache-control': 'only-if-cached' })).status === 200), 'the copy is stored');
  const r = await get('/client-refresh', { 'cache-control': 'max-age=0' });
  t.equal(r.body, 'v2');
  t.equal(r.headers['x-cache'], 'TCP_CLIENT_REFRESH_MISS');
});
