// RFC 5861: stale-while-revalidate serves a stale copy at once and refreshes it in the
// background; stale-if-error serves a stale copy when the origin fails (RFC 9111 4.2.4).
import t from 'tap';
import { cacheBench, reply, sleep } from './fixtures/bench.js';

const { origin, get } = await cacheBench();

t.test('stale-while-revalidate: the stale copy is served at once, one background refresh reaches the origin, the next request gets the new content', async (t) => {
  let version = 1;
  origin.on('/swr', (q, res) => {
    const v = version;
    // The refresh is slow: a client that waited for it would notice.
    setTimeout(() => reply(200, { 'cache-control': `max-age=${v === 1 ? 1 : 60}, stale-while-revalidate=30` }, `v${v}`)(q, res), v === 1 ? 0 : 500);
  });
  t.equal((await get('/swr')).body, 'v1');
  version = 2;
  await sleep(1200);
  const stale = await Promise.all([get('/swr'), get('/swr'), get('/swr')]);
  for (const r of stale) {
    t.equal(r.body, 'v1', 'the stale copy');
    t.equal(r.headers['x-cache'], 'TCP_REFRESH_HIT');
    t.ok(r.ms < 400, `served in ${r.ms} ms, without waiting for the origin`);
  }
  await sleep(800);
  t.equal(origin.count('/swr'), 2, 'exactly one background refresh');
  const next = await get('/swr');
  t.equal(next.body, 'v2');
  t.equal(next.headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/swr'), 2);
});

t.test('stale-while-revalidate: a background refresh answered 304 freshens the copy', async (t) => {
  origin.on('/swr-304', (q, res) => {
    if (q.headers['if-none-match'] === '"w"') { res.writeHead(304, { etag: '"w"', 'cache-control': 'max-age=60, stale-while-revalidate=30' }); res.end(); return; }
    reply(200, { etag: '"w"', 'cache-control': 'max-age=1, stale-while-revalidate=30' }, 'same')(q, res);
  });
  await get('/swr-304');
  await sleep(1200);
  t.equal((await get('/swr-304')).headers['x-cache'], 'TCP_REFRESH_HIT');
  await sleep(300);
  const r = await get('/swr-304');
  t.equal(r.headers['x-cache'], 'TCP_HIT', 'fresh again after the 304');
  t.equal(r.body, 'same');
  t.equal(origin.seen.filter((s) => s.url === '/swr-304')[1]?.headers['if-none-match'], '"w"', 'the refresh was conditional');
  t.equal(origin.count('/swr-304'), 2);
});

t.test('stale-if-error: the origin answers 500 and the stale copy is served (TCP_REF_FAIL_HIT)', async (t) => {
  let failing = false;
  origin.on('/sie', (q, res) => {
    if (failing) { reply(500, {}, 'broken')(q, res); return; }
    reply(200, { 'cache-control': 'max-age=1, stale-if-error=60', etag: '"s"' }, 'good copy')(q, res);
  });
  await get('/sie');
  failing = true;
  await sleep(1200);
  const r = await get('/sie');
  t.equal(r.status, 200);
  t.equal(r.body, 'good copy');
  t.equal(r.headers['x-cache'], 'TCP_REF_FAIL_HIT');
  t.equal(origin.count('/sie'), 2, 'the origin was asked first');
});

t.test('stale-if-error: the origin is down and the stale copy is served', async (t) => {
  origin.on('/sie-down', (q, res) => {
    if (origin.count('/sie-down') > 1) { res.socket?.destroy(); return; }
    reply(200, { 'cache-control': 'max-age=1, stale-if-error=60' }, 'survivor')(q, res);
  });
  await get('/sie-down');
  await sleep(1200);
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
  await sleep(1200);
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
  await sleep(1200);
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
  await sleep(1200);
  t.equal((await get('/sie-mr')).status, 500);
});
