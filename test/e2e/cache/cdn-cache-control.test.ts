// RFC 9213: CDN-Cache-Control targets CDN caches and, when present and valid, replaces
// Cache-Control (and Expires) for this cache; the client still sees Cache-Control.
import t from 'tap';
import { cacheBench, reply } from './fixtures/bench.js';

const { origin, get } = await cacheBench();

t.test('CDN-Cache-Control: max-age=60 with Cache-Control: no-store is cached (the targeted field wins)', async (t) => {
  origin.on('/cdn-cached', reply(200, { 'cdn-cache-control': 'max-age=60', 'cache-control': 'no-store' }, 'for the cdn'));
  const first = await get('/cdn-cached');
  const second = await get('/cdn-cached');
  t.equal(second.status, 200);
  t.equal(second.body, 'for the cdn');
  t.equal(second.headers['x-cache'], 'TCP_HIT');
  t.equal(second.headers['cache-control'], 'no-store', 'Cache-Control is passed on for the browsers');
  t.equal(first.headers['cache-control'], 'no-store');
  t.equal(origin.count('/cdn-cached'), 1);
});

t.test('CDN-Cache-Control: no-store with Cache-Control: max-age=60 is not cached', async (t) => {
  origin.on('/cdn-no-store', reply(200, { 'cdn-cache-control': 'no-store', 'cache-control': 'max-age=60' }, 'not for the cdn'));
  for (let i = 0; i < 3; i++) t.equal((await get('/cdn-no-store')).body, 'not for the cdn');
  t.equal(origin.count('/cdn-no-store'), 3);
});

t.test('CDN-Cache-Control replaces Expires as well', async (t) => {
  origin.on('/cdn-expires', reply(200, { 'cdn-cache-control': 'no-cache', expires: new Date(Date.now() + 60_000).toUTCString(), etag: '"c"' }, 'x'));
  await get('/cdn-expires');
  await get('/cdn-expires');
  t.equal(origin.count('/cdn-expires'), 2, 'no-cache of the targeted field: revalidated despite Expires');
});

t.test('an invalid CDN-Cache-Control is ignored and Cache-Control applies', async (t) => {
  origin.on('/cdn-invalid', reply(200, { 'cdn-cache-control': '', 'cache-control': 'max-age=60' }, 'y'));
  await get('/cdn-invalid');
  t.equal((await get('/cdn-invalid')).headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/cdn-invalid'), 1);
});
