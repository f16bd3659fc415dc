// RFC 5861: stale-while-revalidate serves a stale copy at once and refreshes it in the
// background; stale-if-error serves a stale copy when the origin fails (RFC 9111 4.2.4). The
// origin answering 500 to a stale copy's refresh is tested with the time set, in-process
// (test/pipeline/freshness-clock.test.ts).
import t from 'tap';
import { cacheBench, reply } from './fixtures/bench.js';
import { pollUntil, waitFor } from '../../helpers/wait.js';

const { origin, get, untilStale } = await cacheBench();

t.test('stale-while-revalidate: the stale copy is served at once, one background refresh reaches the origin, the next request gets the new content', async (t) => {
  let version = 1;
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => { release = r; });
  origin.on('/swr', (q, res) => {
    const answer = reply(200, { 'cache-control': `max-age=${version === 1 ? 1 : 60}, stale-while-revalidate=30` }, `v${version}`);
    // The refresh answers only when the test lets it: a client that waited for it would hang.
    if (version === 1) answer(q, res); else void released.then(() => answer(q, res));
  });
  t.equal((await get('/swr')).body, 'v1');
  version = 2;
  // Hits until the copy goes stale; the first stale answer starts the refresh.
  const first = await pollUntil(() => get('/swr'), (r) => r.headers['x-cache'] !== 'TCP_HIT', { timeoutMs: 10_000, intervalMs: 50 });
  const stale = [first, ...await Promise.all([get('/swr'), get('/swr')])];
  for (const r of stale) {
    t.equal(r.body, 'v1', 'the stale copy');
    t.equal(r.headers['x-cache'], 'TCP_REFRESH_HIT', 'served while the origin has not answered the refresh');
  }
  t.ok(await waitFor(() => origin.count('/swr') === 2), 'the refresh reached the origin');
  release();
  const next = await pollUntil(() => get('/swr'), (r) => r.body === 'v2');
  t.equal(next.body, 'v2');
  t.equal(next.headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/swr'), 2, 'exactly one background refresh');
});

t.test('stale-while-revalidate: a background refresh answered 304 freshens the copy', async (t) => {
  origin.on('/swr-304', (q, res) => {
    if (q.headers['if-none-match'] === '"w"') { res.writeHead(304, { etag: '"w"', 'cache-control': 'max-age=60, stale-while-revalidate=30' }); res.end(); return; }
    reply(200, { etag: '"w"', 'cache-control': 'max-age=1, stale-while-revalidate=30' }, 'same')(q, res);
  });
  await get('/swr-304');
  const stale = await pollUntil(() => get('/swr-304'), (r) => r.headers['x-cache'] !== 'TCP_HIT', { timeoutMs: 10_000, intervalMs: 50 });
  t.equal(stale.headers['x-cache'], 'TCP_REFRESH_HIT');
  t.ok(await waitFor(() => origin.count('/swr-304') === 2), 'the background refresh reached the origin');
  const r = await pollUntil(() => get('/swr-304'), (a) => a.headers['x-cache'] === 'TCP_HIT');
  t.equal(r.headers['x-cache'], 'TCP_HIT', 'fresh again after the 304');
  t.equal(r.body, 'same');
  t.equal(origin.seen.filter((s) => s.url === '/swr-304')[1]?.headers['if-none-match'], '"w"', 'the refresh was conditional');
  t.equal(origin.count('/swr-304'), 2);
});

t.test('stale-if-error: the origin is down and the stale copy is served', async (t) => {
  origin.on('/sie-down', (q, res) => {
    if (origin.count('/sie-down') > 1) { res.socket?.destroy(); return; }
    reply(200, { 'cache-control': 'max-age=1, stale-if-error=60' }, 'survivor')(q, res);
  });
  await get('/sie-down');
  t.ok(await untilStale('/sie-down'));
  const r = await get('/sie-down');
  t.equal(r.status, 200);
  t.equal(r.body, 'survivor');
  t.equal(r.headers['x-cache'], 'TCP_REF_FAIL_HIT');
});

t.test('a client stale-if-error allows the stale copy on an origin error too', async (t) => {
  origin.on('/sie-req', (q, res) => {
    if (origin.count('/sie-req') > 1) { reply(503, {}, 'overloaded')(q, res); return; }
    reply(200, { 'cache-control': 'max-age=1' , etag: '"q"' }, 'client asked')(q, res);
  });
  await get('/sie-req');
  t.ok(await untilStale('/sie-req'));
  const r = await get('/sie-req', { 'cache-control': 'stale-if-error=60' });
  t.equal(r.status, 200);
  t.equal(r.body, 'client asked');
  t.equal(r.headers['x-cache'], 'TCP_REF_FAIL_HIT');
});

t.test('without stale-if-error the origin 500 is passed on', async (t) => {
  origin.on('/no-sie', (q, res) => {
    if (origin.count('/no-sie') > 1) { reply(500, {}, 'broken')(q, res); return; }
    reply(200, { 'cache-control': 'max-age=1', etag: '"n"' }, 'only once')(q, res);
  });
  await get('/no-sie');
  t.ok(await untilStale('/no-sie'));
  const r = await get('/no-sie');
  t.equal(r.status, 500);
  t.equal(r.body, 'broken');
});

t.test('must-revalidate forbids stale-if-error: the 500 is passed on', async (t) => {
  origin.on('/sie-mr', (q, res) => {
    if (origin.count('/sie-mr') > 1) { reply(500, {}, 'broken')(q, res); return; }
    reply(200, { 'cache-control': 'max-age=1, must-revalidate, stale-if-error=60' }, 'strict')(q, res);
  });
  await get('/sie-mr');
  t.ok(await untilStale('/sie-mr'));
  t.equal((await get('/sie-mr')).status, 500);
});
