// What a shared cache keeps of a response and what it adds: fields named by private="..." and
// no-cache="..." are not stored (RFC 9111 5.2.2.7, 5.2.2.4), a response without Date gets the
// time it was received (RFC 9110 6.6.1), a stored 204 has no Content-Length (RFC 9110 8.6), and
// only answers served from the cache carry our Age (RFC 9111 5.1).
import t from 'tap';
import { cacheBench, reply } from './fixtures/bench.js';
import { pollUntil } from '../../helpers/wait.js';

const { origin, get, untilStale } = await cacheBench();

/** Hits until the copy has spent a second in the cache (Age 1); the first answer that is not a hit ends it too. */
const aSecondLater = (path: string) => pollUntil(() => get(path), (r) => r.headers['x-cache'] !== 'TCP_HIT' || Number(r.headers.age) >= 1, { timeoutMs: 10_000, intervalMs: 50 });

t.test('a field named by private="..." reaches only the client that fetched it: not coalesced clients, not hits', async (t) => {
  origin.on('/private-field', (q, res) => setTimeout(() => reply(200, {
    'cache-control': 'max-age=60, private="set-cookie"', 'set-cookie': 'session=alice', 'x-kept': 'yes',
  }, 'shared body')(q, res), 300));
  const answers = await Promise.all(Array.from({ length: 5 }, () => get('/private-field')));
  t.equal(origin.count('/private-field'), 1);
  t.equal(answers.filter((a) => a.headers['set-cookie'] !== undefined).length, 1, 'only the fetching client got the cookie');
  t.equal(answers.filter((a) => a.body === 'shared body' && a.headers['x-kept'] === 'yes').length, 5);
  const hit = await get('/private-field');
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.equal(hit.headers['set-cookie'], undefined, 'not stored');
  t.equal(hit.headers['x-kept'], 'yes');
});

t.test('a field named by no-cache="..." is not served from the cache, not even after a 304', async (t) => {
  origin.on('/no-cache-field', (q, res) => {
    if (q.headers['if-none-match'] === '"n"') {
      res.writeHead(304, { etag: '"n"', 'cache-control': 'max-age=60, no-cache="x-token"', 'x-token': 'secret-2' });
      res.end();
      return;
    }
    reply(200, { etag: '"n"', 'cache-control': 'max-age=3, no-cache="x-token"', 'x-token': 'secret-1' }, 'nc')(q, res);
  });
  t.equal((await get('/no-cache-field')).headers['x-token'], 'secret-1', 'the fetching client gets it');
  t.equal((await get('/no-cache-field')).headers['x-token'], undefined);
  t.ok(await untilStale('/no-cache-field'));
  const refreshed = await get('/no-cache-field');
  t.equal(refreshed.headers['x-cache'], 'TCP_REFRESH_HIT');
  t.equal(refreshed.headers['x-token'], undefined, 'the 304 merge does not store it either');
  t.equal((await get('/no-cache-field')).headers['x-token'], undefined);
});

t.test('a response without Date is stored with the time it was received: a later hit keeps that Date', async (t) => {
  origin.on('/no-date', (_q, res) => {
    res.sendDate = false;
    res.writeHead(200, { 'cache-control': 'max-age=60', 'content-length': '2' });
    res.end('nd');
  });
  const first = await get('/no-date');
  const hit = await aSecondLater('/no-date');
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.ok(hit.headers.date, 'a Date is sent');
  t.equal(hit.headers.date, first.headers.date, 'the same Date as when it was received, not the time of the hit');
  t.ok(Number(hit.headers.age) >= 1, `Age ${String(hit.headers.age)} counts from the receipt`);
});

t.test('a 304 without Date gives the freshened copy the time of the revalidation as Date, kept by later hits', async (t) => {
  origin.on('/no-date-304', (q, res) => {
    if (q.headers['if-none-match'] === '"d"') {
      res.sendDate = false;
      res.writeHead(304, { etag: '"d"', 'cache-control': 'max-age=60' });
      res.end();
      return;
    }
    reply(200, { etag: '"d"', 'cache-control': 'max-age=1', date: 'Sun, 06 Nov 1994 08:49:37 GMT' }, 'old date')(q, res);
  });
  await get('/no-date-304');
  t.ok(await untilStale('/no-date-304'));
  const refreshed = await get('/no-date-304');
  t.equal(refreshed.headers['x-cache'], 'TCP_REFRESH_HIT');
  t.not(refreshed.headers.date, 'Sun, 06 Nov 1994 08:49:37 GMT', 'not the Date of the old message');
  t.equal(refreshed.headers.age, '0', 'the copy was just validated');
  const hit = await aSecondLater('/no-date-304');
  t.equal(hit.headers['x-cache'], 'TCP_HIT', 'fresh for the 304s max-age, not aged by an old Date');
  t.equal(hit.headers.date, refreshed.headers.date, 'the Date of the revalidation, not of this hit');
});

t.test('a stored 204 is served without Content-Length', async (t) => {
  origin.on('/empty', (_q, res) => { res.writeHead(204, { 'cache-control': 'max-age=60' }); res.end(); });
  await get('/empty');
  const hit = await get('/empty');
  t.equal(hit.status, 204);
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.equal(hit.headers['content-length'], undefined);
});

t.test('the answer to the request that fetched the object carries no Age of ours; a hit does', async (t) => {
  origin.on('/age', reply(200, { 'cache-control': 'max-age=60' }, 'aged'));
  const miss = await get('/age');
  t.equal(miss.headers['x-cache'], 'TCP_MISS');
  t.equal(miss.headers.age, undefined);
  const hit = await get('/age');
  t.equal(hit.headers.age, '0');
});

t.test('412 and 416 from the cache carry Age and Via like the other cached answers', async (t) => {
  origin.on('/pre', reply(200, { 'cache-control': 'max-age=60', etag: '"p"' }, 'precondition'));
  await get('/pre');
  const failed = await get('/pre', { 'if-match': '"other"' });
  t.equal(failed.status, 412);
  t.ok(failed.headers.age !== undefined && failed.headers.via !== undefined);
  const range = await get('/pre', { range: 'bytes=999-' });
  t.equal(range.status, 416);
  t.ok(range.headers.age !== undefined && range.headers.via !== undefined);
});

t.test('a 503 without freshness is not cached by default (not heuristically cacheable)', async (t) => {
  origin.on('/unavailable', reply(503, {}, 'later'));
  await get('/unavailable');
  const second = await get('/unavailable');
  t.equal(second.status, 503);
  t.equal(origin.count('/unavailable'), 2);
});
