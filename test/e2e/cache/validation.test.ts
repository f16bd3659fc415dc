// RFC 9111 4.3 (validation), 5.2.1 (request directives) and 5.2.2 (response directives that
// force or forbid revalidation); RFC 9110 13 for client conditionals answered from the cache.
import type { ServerResponse } from 'node:http';
import t from 'tap';
import type { SeenRequest } from '../../helpers/origin.js';
import { cacheBench, reply } from './fixtures/bench.js';

const { origin, get } = await cacheBench();
const LM = new Date(Date.now() - 86400_000).toUTCString();
const seenOf = (path: string): SeenRequest[] => origin.seen.filter((s) => s.url === path);

/** An origin that answers 304 to a matching If-None-Match, else 200 with `etag`. */
function etagOrigin(etag: string, cc: string, body: string, on304: Record<string, string> = {}) {
  return (q: SeenRequest, res: ServerResponse): void => {
    if (q.headers['if-none-match'] === etag) { res.writeHead(304, { etag, 'cache-control': cc, ...on304 }); res.end(); return; }
    reply(200, { etag, 'cache-control': cc }, body)(q, res);
  };
}

t.test('a stale entry is revalidated with If-None-Match; the 304 updates the stored fields (TCP_REFRESH_HIT)', async (t) => {
  origin.on('/etag', etagOrigin('"v1"', 'max-age=0', 'etag body', { 'cache-control': 'max-age=60', 'x-version': '2' }));
  const first = await get('/etag');
  t.equal(first.headers['x-version'], undefined);
  const second = await get('/etag');
  t.equal(second.status, 200);
  t.equal(second.body, 'etag body');
  t.equal(second.headers['x-cache'], 'TCP_REFRESH_HIT');
  t.equal(seenOf('/etag')[1]?.headers['if-none-match'], '"v1"', 'the origin got a conditional request');
  const third = await get('/etag');
  t.equal(third.headers['x-cache'], 'TCP_HIT', 'the 304 made the copy fresh for 60 s');
  t.equal(third.headers['x-version'], '2', 'the field the 304 brought is stored');
  t.equal(third.body, 'etag body');
  t.equal(origin.count('/etag'), 2);
});

t.test('an entry with only Last-Modified is revalidated with If-Modified-Since', async (t) => {
  origin.on('/lm', (q, res) => {
    if (q.headers['if-modified-since'] === LM) { res.writeHead(304, { 'cache-control': 'max-age=0' }); res.end(); return; }
    reply(200, { 'last-modified': LM, 'cache-control': 'max-age=0' }, 'lm body')(q, res);
  });
  await get('/lm');
  const r = await get('/lm');
  t.equal(r.body, 'lm body');
  t.equal(r.headers['x-cache'], 'TCP_REFRESH_HIT');
  const asked = seenOf('/lm')[1]!;
  t.equal(asked.headers['if-modified-since'], LM);
  t.equal(asked.headers['if-none-match'], undefined);
});

t.test('a 200 to a revalidation replaces the stored body (TCP_REFRESH_MISS)', async (t) => {
  let version = 1;
  origin.on('/replace', (q, res) => reply(200, { etag: `"r${version}"`, 'cache-control': version === 1 ? 'max-age=0' : 'max-age=60' }, `version ${version}`)(q, res));
  t.equal((await get('/replace')).body, 'version 1');
  version = 2;
  const r = await get('/replace');
  t.equal(r.body, 'version 2');
  t.equal(r.headers['x-cache'], 'TCP_REFRESH_MISS');
  t.equal(seenOf('/replace')[1]?.headers['if-none-match'], '"r1"');
  const hit = await get('/replace');
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.equal(hit.body, 'version 2');
  t.equal(hit.headers.etag, '"r2"');
});

t.test('a client If-None-Match matching the stored ETag is answered 304 from the cache (TCP_IMS_HIT)', async (t) => {
  origin.on('/inm', reply(200, { etag: '"i1"', 'cache-control': 'max-age=60' }, 'inm body'));
  await get('/inm');
  const r = await get('/inm', { 'if-none-match': '"i1"' });
  t.equal(r.status, 304);
  t.equal(r.body, '');
  t.equal(r.headers.etag, '"i1"');
  t.equal(r.headers['x-cache'], 'TCP_IMS_HIT');
  const other = await get('/inm', { 'if-none-match': '"other"' });
  t.equal(other.status, 200, 'another ETag gets the full answer');
  t.equal(other.body, 'inm body');
  t.equal(origin.count('/inm'), 1);
});

t.test('a client If-Modified-Since not older than Last-Modified is answered 304 from the cache', async (t) => {
  origin.on('/ims', reply(200, { 'last-modified': LM, 'cache-control': 'max-age=60' }, 'ims body'));
  await get('/ims');
  const r = await get('/ims', { 'if-modified-since': new Date().toUTCString() });
  t.equal(r.status, 304);
  t.equal(r.headers['x-cache'], 'TCP_IMS_HIT');
  const older = await get('/ims', { 'if-modified-since': new Date(Date.now() - 10 * 86400_000).toUTCString() });
  t.equal(older.status, 200);
  t.equal(older.body, 'ims body');
  t.equal(origin.count('/ims'), 1);
});

t.test('a client If-Modified-Since to a fresh copy without Last-Modified is judged by its Date (RFC 9111 4.3.2)', async (t) => {
  // The test origin (node:http) sends Date and no Last-Modified.
  origin.on('/ims-date', reply(200, { 'cache-control': 'max-age=60' }, 'date body'));
  const first = await get('/ims-date');
  t.equal(first.headers['last-modified'], undefined);
  const r = await get('/ims-date', { 'if-modified-since': new Date().toUTCString() });
  t.equal(r.status, 304, 'not modified since a time not before its Date');
  t.equal(r.headers['x-cache'], 'TCP_IMS_HIT');
  const older = await get('/ims-date', { 'if-modified-since': new Date(Date.now() - 10 * 86400_000).toUTCString() });
  t.equal(older.status, 200, 'a time before its Date gets the body');
  t.equal(older.body, 'date body');
  t.equal(origin.count('/ims-date'), 1, 'all from the cache');
});

t.test('request Cache-Control: no-cache forces a conditional request to the origin', async (t) => {
  origin.on('/req-no-cache', etagOrigin('"n1"', 'max-age=60', 'nc body'));
  await get('/req-no-cache');
  const r = await get('/req-no-cache', { 'cache-control': 'no-cache' });
  t.equal(r.status, 200);
  t.equal(r.body, 'nc body');
  t.equal(origin.count('/req-no-cache'), 2);
  t.equal(seenOf('/req-no-cache')[1]?.headers['if-none-match'], '"n1"');
});

t.test('request max-age=0 sends the request to the origin although the copy is fresh', async (t) => {
  origin.on('/req-max-age', etagOrigin('"m1"', 'max-age=60', 'ma body'));
  await get('/req-max-age');
  const r = await get('/req-max-age', { 'cache-control': 'max-age=0' });
  t.equal(r.body, 'ma body');
  t.equal(origin.count('/req-max-age'), 2);
  t.equal(seenOf('/req-max-age')[1]?.headers['if-none-match'], '"m1"');
});

t.test('request min-fresh beyond the remaining freshness sends the request to the origin', async (t) => {
  origin.on('/min-fresh', etagOrigin('"f1"', 'max-age=30', 'mf body'));
  await get('/min-fresh');
  t.equal((await get('/min-fresh', { 'cache-control': 'min-fresh=10' })).headers['x-cache'], 'TCP_HIT', 'fresh for 10 s more');
  t.equal(origin.count('/min-fresh'), 1);
  await get('/min-fresh', { 'cache-control': 'min-fresh=120' });
  t.equal(origin.count('/min-fresh'), 2, 'not fresh for 120 s more: the origin is asked');
});

t.test('request max-stale serves a stale copy without asking the origin', async (t) => {
  origin.on('/max-stale', reply(200, { etag: '"x1"', 'cache-control': 'max-age=0' }, 'stale ok'));
  await get('/max-stale');
  const r = await get('/max-stale', { 'cache-control': 'max-stale=60' });
  t.equal(r.status, 200);
  t.equal(r.body, 'stale ok');
  t.equal(origin.count('/max-stale'), 1);
});

t.test('only-if-cached on a miss is answered 504 without asking the origin', async (t) => {
  const r = await get('/only-if-cached', { 'cache-control': 'only-if-cached' });
  t.equal(r.status, 504);
  t.equal(origin.count('/only-if-cached'), 0);
  origin.on('/only-if-cached-hit', reply(200, { 'cache-control': 'max-age=60' }, 'there'));
  await get('/only-if-cached-hit');
  const hit = await get('/only-if-cached-hit', { 'cache-control': 'only-if-cached' });
  t.equal(hit.status, 200, 'a fresh stored copy answers it');
  t.equal(hit.body, 'there');
});

t.test('must-revalidate / proxy-revalidate: a stale copy is never served without the origin, even with max-stale', async (t) => {
  for (const d of ['must-revalidate', 'proxy-revalidate']) {
    const path = `/${d}`;
    origin.on(path, etagOrigin(`"${d}"`, `max-age=0, ${d}`, `${d} body`));
    await get(path);
    const r = await get(path, { 'cache-control': 'max-stale=600' });
    t.equal(r.body, `${d} body`);
    t.equal(origin.count(path), 2, `${d}: the origin was asked`);
    t.equal(seenOf(path)[1]?.headers['if-none-match'], `"${d}"`);
  }
});

t.test('a response no-cache is revalidated on every request', async (t) => {
  origin.on('/res-no-cache', etagOrigin('"c1"', 'no-cache, max-age=60', 'revalidated'));
  for (let i = 0; i < 3; i++) t.equal((await get('/res-no-cache')).body, 'revalidated');
  t.equal(origin.count('/res-no-cache'), 3);
  t.same(seenOf('/res-no-cache').slice(1).map((s) => s.headers['if-none-match']), ['"c1"', '"c1"'], 'conditional after the first');
});

t.test('no-cache="set-cookie" serves the hit without Set-Cookie', async (t) => {
  origin.on('/nc-field', reply(200, { 'cache-control': 'max-age=60, no-cache="set-cookie"', 'set-cookie': 'sid=1' }, 'cookie body'));
  await get('/nc-field');
  const r = await get('/nc-field');
  t.equal(r.headers['x-cache'], 'TCP_HIT');
  t.equal(r.body, 'cookie body');
  t.equal(r.headers['set-cookie'], undefined);
  t.equal(origin.count('/nc-field'), 1);
});

t.test('every 304 shows in the answers after it: its Date and the Age it gives, then a field it changes (RFC 9111 4.3.4)', async (t) => {
  const hourAgo = new Date(Date.now() - 3_600_000).toUTCString();
  let on304: Record<string, string> = {};
  origin.on('/each-304', (q, res) => {
    if (q.headers['if-none-match'] === '"e1"') { res.writeHead(304, { etag: '"e1"', 'cache-control': 'max-age=0', ...on304 }); res.end(); return; }
    reply(200, { etag: '"e1"', 'cache-control': 'max-age=0', date: hourAgo, 'x-version': '1' }, 'each body')(q, res);
  });
  t.equal((await get('/each-304')).headers.date, hourAgo, 'stored with the Date of an hour ago');
  // The 304 brings only a new Date: the copy is an hour younger.
  const second = await get('/each-304');
  t.equal(second.headers['x-cache'], 'TCP_REFRESH_HIT');
  t.not(second.headers.date, hourAgo, 'the Date of the 304');
  t.ok(Math.abs(Date.parse(String(second.headers.date)) - Date.now()) < 10_000, 'a Date of now');
  t.ok(Number(second.headers.age) < 60, `Age ${second.headers.age} counts from the 304`);
  t.equal(second.headers['x-version'], '1');
  // Then 304s that change a field: every answer after them has it.
  on304 = { 'x-version': '2' };
  for (let i = 0; i < 2; i++) {
    const r = await get('/each-304');
    t.equal(r.headers['x-cache'], 'TCP_REFRESH_HIT');
    t.equal(r.headers['x-version'], '2', `answer ${i + 3} has the field of the 304`);
    t.equal(r.body, 'each body');
  }
  t.equal(origin.count('/each-304'), 4);
});
