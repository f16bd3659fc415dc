// Negative caching: a 404 / 410 without freshness is kept for functions.network.cache.ttl.negative
// seconds (TCP_NEGATIVE_HIT), 5xx gateway errors too when ttl.negativeServerErrors opts in (this
// file does; the default is off, see stored-fields.test.ts); redirects with freshness are cached
// like any response (TCP_REDIRECT_HIT).
import t from 'tap';
import { cacheBench, reply } from './fixtures/bench.js';

const { origin, get, untilStale } = await cacheBench({ extra: { functions: { network: { cache: { ttl: { negative: 3, negativeServerErrors: true } } } } } });

t.test('a 404 without freshness is cached for the negative TTL, then fetched again', async (t) => {
  origin.on('/missing', reply(404, {}, 'not here'));
  const first = await get('/missing');
  t.equal(first.status, 404);
  t.equal(first.headers['x-cache'], 'TCP_MISS');
  const second = await get('/missing');
  t.equal(second.status, 404);
  t.equal(second.body, 'not here');
  t.equal(second.headers['x-cache'], 'TCP_NEGATIVE_HIT');
  t.equal(origin.count('/missing'), 1);
  t.ok(await untilStale('/missing'), 'the negative TTL (3 s) runs out');
  const later = await get('/missing');
  t.equal(later.status, 404);
  t.not(later.headers['x-cache'], 'TCP_NEGATIVE_HIT');
  t.equal(origin.count('/missing'), 2, 'fetched again once the negative TTL has passed');
});

t.test('a 404 with its own max-age keeps it rather than the negative TTL', async (t) => {
  origin.on('/missing-long', reply(404, { 'cache-control': 'max-age=60' }, 'gone for a while'));
  origin.on('/missing-short', reply(404, {}, 'gone'));
  await get('/missing-long');
  await get('/missing-short');
  t.ok(await untilStale('/missing-short'), 'a 404 without max-age stored at the same time has expired');
  t.equal((await get('/missing-long')).headers['x-cache'], 'TCP_NEGATIVE_HIT');
  t.equal(origin.count('/missing-long'), 1);
});

t.test('a 403 is not negatively cached', async (t) => {
  origin.on('/forbidden', reply(403, {}, 'no'));
  await get('/forbidden');
  await get('/forbidden');
  t.equal(origin.count('/forbidden'), 2);
});

t.test('a 301 with max-age is cached and served as TCP_REDIRECT_HIT', async (t) => {
  origin.on('/moved', reply(301, { location: '/new-place', 'cache-control': 'max-age=60' }, ''));
  await get('/moved');
  const r = await get('/moved');
  t.equal(r.status, 301);
  t.equal(r.headers.location, '/new-place');
  t.equal(r.headers['x-cache'], 'TCP_REDIRECT_HIT');
  t.equal(origin.count('/moved'), 1);
});

t.test('with negativeServerErrors a 503 without freshness is cached for the negative TTL', async (t) => {
  origin.on('/down', reply(503, {}, 'down'));
  await get('/down');
  const second = await get('/down');
  t.equal(second.status, 503);
  t.equal(second.headers['x-cache'], 'TCP_NEGATIVE_HIT');
  t.equal(origin.count('/down'), 1);
});

t.test('even with negativeServerErrors a refresh answered 502 does not replace a copy that has a validator', async (t) => {
  let failing = false;
  origin.on('/flaky', (q, res) => {
    if (failing) { reply(502, {}, 'bad gateway')(q, res); return; }
    if (q.headers['if-none-match'] === '"f"') { res.writeHead(304, { etag: '"f"', 'cache-control': 'max-age=60' }); res.end(); return; }
    reply(200, { etag: '"f"', 'cache-control': 'max-age=1' }, 'good')(q, res);
  });
  await get('/flaky');
  t.ok(await untilStale('/flaky'));
  failing = true;
  t.equal((await get('/flaky')).status, 502);
  failing = false;
  const r = await get('/flaky');
  t.equal(r.body, 'good');
  t.equal(r.headers['x-cache'], 'TCP_REFRESH_HIT', 'the old copy was revalidated, not a stored 502 served');
});
