// RFC 9111 3 and 4.2: what a shared cache stores, how long it stays fresh, and the Age it sends.
import t from 'tap';
import { cacheBench, reply } from './fixtures/bench.js';
import { pollUntil } from '../../helpers/wait.js';

const { origin, get } = await cacheBench();
const httpDate = (msAgo: number): string => new Date(Date.now() - msAgo).toUTCString();

t.test('a response with max-age is served from the cache while fresh: the origin is asked once for three GETs', async (t) => {
  origin.on('/max-age', reply(200, { 'cache-control': 'max-age=60' }, 'fresh body'));
  const a = await get('/max-age');
  const b = await get('/max-age');
  const c = await get('/max-age');
  t.equal(a.headers['x-cache'], 'TCP_MISS');
  for (const r of [a, b, c]) { t.equal(r.status, 200); t.equal(r.body, 'fresh body'); }
  t.equal(b.headers['x-cache'], 'TCP_HIT');
  t.equal(c.headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/max-age'), 1);
});

t.test('a response with explicit freshness is reused whatever its status, codes this cache does not know included; a stale one is revalidated', async (t) => {
  for (const status of [299, 499, 599]) {
    origin.on(`/status-${status}`, reply(status, { 'cache-control': 'max-age=60' }, `body ${status}`));
    const a = await get(`/status-${status}`);
    const b = await get(`/status-${status}`);
    t.equal(a.status, status);
    t.equal(b.status, status, `${status} from the cache`);
    t.equal(b.body, `body ${status}`);
    // A stored error answer is labelled a negative hit, as a stored 404 is.
    t.equal(b.headers['x-cache'], status < 400 ? 'TCP_HIT' : 'TCP_NEGATIVE_HIT', `${status} is a hit`);
    t.equal(origin.count(`/status-${status}`), 1);
  }
  origin.on('/status-stale', (q, res) => {
    if (q.headers['if-none-match'] === '"s1"') { res.writeHead(304, { etag: '"s1"', 'cache-control': 'max-age=0' }); res.end(); return; }
    reply(299, { etag: '"s1"', 'cache-control': 'max-age=0' }, 'stale body')(q, res);
  });
  await get('/status-stale');
  const again = await get('/status-stale');
  t.equal(again.status, 299);
  t.equal(again.body, 'stale body');
  t.equal(again.headers['x-cache'], 'TCP_REFRESH_HIT', 'revalidated with the origin, the body from the cache');
});

t.test('s-maxage takes precedence over max-age in a shared cache (s-maxage=0 means revalidate)', async (t) => {
  origin.on('/s-maxage', reply(200, { 'cache-control': 'max-age=60, s-maxage=0', etag: '"s1"' }, 'shared'));
  await get('/s-maxage');
  const second = await get('/s-maxage');
  t.equal(second.body, 'shared');
  t.equal(origin.count('/s-maxage'), 2, 'the second request went to the origin');
  const last = origin.seen.filter((s) => s.url === '/s-maxage').at(-1)!;
  t.equal(last.headers['if-none-match'], '"s1"', 'as a conditional request');
});

t.test('s-maxage gives freshness to a response whose max-age is 0', async (t) => {
  origin.on('/s-maxage-60', reply(200, { 'cache-control': 'max-age=0, s-maxage=60' }, 'shared 60'));
  await get('/s-maxage-60');
  const r = await get('/s-maxage-60');
  t.equal(r.headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/s-maxage-60'), 1);
});

t.test('Expires minus Date gives the freshness lifetime', async (t) => {
  origin.on('/expires', (_q, res) => {
    const now = Date.now();
    reply(200, { date: new Date(now).toUTCString(), expires: new Date(now + 60_000).toUTCString() }, 'expires')(_q, res);
  });
  origin.on('/expired', (_q, res) => {
    const now = Date.now();
    reply(200, { date: new Date(now).toUTCString(), expires: new Date(now - 1000).toUTCString(), etag: '"e"' }, 'expired')(_q, res);
  });
  await get('/expires');
  t.equal((await get('/expires')).headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/expires'), 1);
  await get('/expired');
  await get('/expired');
  t.equal(origin.count('/expired'), 2, 'an Expires before Date is stale at once');
});

t.test('a 200 with only Last-Modified is fresh by heuristic and served from the cache', async (t) => {
  origin.on('/heuristic', reply(200, { 'last-modified': httpDate(10 * 86400_000) }, 'old document'));
  await get('/heuristic');
  const r = await get('/heuristic');
  t.equal(r.headers['x-cache'], 'TCP_HIT');
  t.equal(r.body, 'old document');
  t.equal(origin.count('/heuristic'), 1);
});

t.test('a response with neither freshness nor a validator is not reused: the origin is asked each time', async (t) => {
  origin.on('/neither', reply(200, {}, 'plain'));
  for (let i = 0; i < 3; i++) t.equal((await get('/neither')).body, 'plain');
  t.equal(origin.count('/neither'), 3);
});

t.test('no-store is never stored', async (t) => {
  origin.on('/no-store', reply(200, { 'cache-control': 'no-store, max-age=60' }, 'secret'));
  for (let i = 0; i < 3; i++) {
    const r = await get('/no-store');
    t.equal(r.body, 'secret');
    t.not(r.headers['x-cache'], 'TCP_HIT');
  }
  t.equal(origin.count('/no-store'), 3);
});

t.test('private is not stored by a shared cache', async (t) => {
  origin.on('/private', reply(200, { 'cache-control': 'private, max-age=60' }, 'mine'));
  for (let i = 0; i < 3; i++) t.equal((await get('/private')).body, 'mine');
  t.equal(origin.count('/private'), 3);
});

t.test('a request with Authorization is not stored unless the response says public, s-maxage or must-revalidate', async (t) => {
  const auth = { authorization: 'Bearer abc' };
  origin.on('/auth/plain', reply(200, { 'cache-control': 'max-age=60' }, 'p'));
  origin.on('/auth/public', reply(200, { 'cache-control': 'public, max-age=60' }, 'pub'));
  origin.on('/auth/s-maxage', reply(200, { 'cache-control': 's-maxage=60' }, 'sm'));
  origin.on('/auth/must-revalidate', reply(200, { 'cache-control': 'max-age=60, must-revalidate' }, 'mr'));
  for (let i = 0; i < 2; i++) await get('/auth/plain', auth);
  t.equal(origin.count('/auth/plain'), 2, 'plain max-age: not stored');
  for (const p of ['/auth/public', '/auth/s-maxage', '/auth/must-revalidate']) {
    await get(p, auth);
    const r = await get(p, auth);
    t.equal(r.headers['x-cache'], 'TCP_HIT', `${p}: a hit`);
    t.equal(origin.count(p), 1, `${p}: stored`);
  }
});

t.test('Age is sent, includes the origin Age and grows while the copy is in the cache', async (t) => {
  origin.on('/age', reply(200, { 'cache-control': 'max-age=600', age: '10' }, 'aged'));
  const first = await get('/age');
  t.ok(Number(first.headers.age) >= 10, `first answer age ${String(first.headers.age)} >= 10`);
  // Hits until a second has passed in the cache.
  const later = await pollUntil(() => get('/age'), (r) => r.headers['x-cache'] !== 'TCP_HIT' || Number(r.headers.age) >= 11, { timeoutMs: 10_000, intervalMs: 50 });
  t.equal(later.headers['x-cache'], 'TCP_HIT');
  t.ok(Number(later.headers.age) >= 11, `age ${String(later.headers.age)} grew by the second spent in the cache`);
  t.equal(origin.count('/age'), 1);
});

t.test('an Age list from the origin counts by its first member: an object older than its max-age is not served fresh', async (t) => {
  origin.on('/age-list', reply(200, { 'cache-control': 'max-age=600', age: '5000, 0' }, 'old'));
  const first = await get('/age-list');
  t.equal(first.body, 'old');
  t.equal(first.headers.age, '5000, 0', 'the answer that fetched it passes the origin\'s Age on as received');
  const second = await get('/age-list');
  t.not(second.headers['x-cache'], 'TCP_HIT', 'not a fresh hit');
  t.equal(origin.count('/age-list'), 2, 'the origin is asked again');
});

t.test('an impossible Age (beyond 2^31) counts as 2^31: the object is never a fresh hit', async (t) => {
  origin.on('/age-huge', reply(200, { 'cache-control': 'max-age=31536000', age: '99999999999999999999999' }, 'ancient'));
  await get('/age-huge');
  const second = await get('/age-huge');
  t.not(second.headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/age-huge'), 2);
});

t.test('a non-numeric Age from the origin is ignored: the object is fresh for its max-age', async (t) => {
  origin.on('/age-bad', reply(200, { 'cache-control': 'max-age=600', age: 'soon' }, 'fine'));
  await get('/age-bad');
  const r = await get('/age-bad');
  t.equal(r.headers['x-cache'], 'TCP_HIT');
  t.ok(Number(r.headers.age) < 600, `Age ${String(r.headers.age)}`);
  t.equal(origin.count('/age-bad'), 1);
});

t.test('the origin Date is kept on hits', async (t) => {
  const date = httpDate(3000);
  origin.on('/date', reply(200, { 'cache-control': 'max-age=60', date }, 'dated'));
  await get('/date');
  const r = await get('/date');
  t.equal(r.headers['x-cache'], 'TCP_HIT');
  t.equal(r.headers.date, date, 'Date is the origin one, not the time of the hit');
  t.ok(Number(r.headers.age) >= 3, 'and the age accounts for it');
});
