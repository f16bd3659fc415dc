// Stored answers reused beyond the plain GET miss-then-hit: a POST's answer that names its own
// URI (RFC 9110 9.3.3, RFC 9111 4), and the stored variants a 304 freshens (RFC 9111 4.3.4).
import t from 'tap';
import type { SeenRequest } from '../../helpers/origin.js';
import { cacheBench, reply } from './fixtures/bench.js';

const { origin, get } = await cacheBench();
const gets = (path: string): SeenRequest[] => origin.seen.filter((s) => s.method === 'GET' && s.url === path);

/** GETs answered `get #n` (fresh for a minute); POSTs answered `posted` with the given fields. */
function postOrigin(path: string, onPost: Record<string, string>): void {
  let n = 0;
  origin.on(path, (q, res) => {
    if (q.method === 'POST') { reply(200, onPost, 'posted')(q, res); return; }
    reply(200, { 'cache-control': 'max-age=60' }, `get #${++n}`)(q, res);
  });
}

t.test('a POST answer with explicit freshness and a Content-Location of its own URL is what later GETs get', async (t) => {
  postOrigin('/article', { 'cache-control': 'max-age=60', 'content-location': '/article' });
  t.equal((await get('/article')).body, 'get #1');
  const posted = await get('/article', { 'content-type': 'text/plain' }, { method: 'POST', body: 'edit' });
  t.equal(posted.body, 'posted');
  const after = await get('/article');
  t.equal(after.status, 200);
  t.equal(after.body, 'posted', 'the POST answer, not the copy it invalidated');
  t.equal(after.headers['x-cache'], 'TCP_HIT');
  t.match(after.headers['cache-status'], /^svc; hit; ttl=\d+$/);
  t.match(posted.headers['cache-status'], /^svc; fwd=method; fwd-status=200; stored$/);
  t.equal(gets('/article').length, 1, 'no GET went to the origin after the POST');
});

t.test('an absolute Content-Location naming the same URL counts; one with another query does not', async (t) => {
  postOrigin('/abs', { 'cache-control': 'max-age=60', 'content-location': 'http://cache.test/abs?x=1' });
  await get('/abs?x=1', {}, { method: 'POST', body: 'a' });
  t.equal((await get('/abs?x=1')).body, 'posted');
  postOrigin('/other-query', { 'cache-control': 'max-age=60', 'content-location': '/other-query?x=2' });
  await get('/other-query?x=1', {}, { method: 'POST', body: 'a' });
  t.equal((await get('/other-query?x=1')).body, 'get #1', 'fetched from the origin');
  t.not((await get('/other-query?x=2')).body, 'posted', 'nor stored under the URL it names');
});

t.test('a POST answer without Content-Location, or without explicit freshness, is not reused', async (t) => {
  postOrigin('/no-cl', { 'cache-control': 'max-age=60' });
  await get('/no-cl', {}, { method: 'POST', body: 'a' });
  t.equal((await get('/no-cl')).body, 'get #1');
  postOrigin('/no-fresh', { 'content-location': '/no-fresh', 'last-modified': new Date(Date.now() - 86400_000).toUTCString() });
  await get('/no-fresh', {}, { method: 'POST', body: 'a' });
  t.equal((await get('/no-fresh')).body, 'get #1', 'heuristic freshness is not enough');
  postOrigin('/no-store', { 'cache-control': 'max-age=60, no-store', 'content-location': '/no-store' });
  await get('/no-store', {}, { method: 'POST', body: 'a' });
  t.equal((await get('/no-store')).body, 'get #1');
});

t.test('a POST answer the origin breaks off is not kept for GETs', async (t) => {
  let n = 0;
  origin.on('/cut', (q, res) => {
    if (q.method !== 'POST') { reply(200, { 'cache-control': 'max-age=60' }, `get #${++n}`)(q, res); return; }
    res.writeHead(200, { 'cache-control': 'max-age=60', 'content-location': '/cut', 'content-length': '20' });
    res.write('part');
    setImmediate(() => res.destroy());
  });
  await t.rejects(get('/cut', {}, { method: 'POST', body: 'a' }), 'the client sees the answer cut');
  t.equal((await get('/cut')).body, 'get #1', 'the next GET goes to the origin');
});

/**
 * Answers vary by X-Variant; `etags` gives each variant's strong ETag. A conditional request with
 * the variant's ETag gets 304 fresh for a minute with `x-version: 2`; the first answers are stale
 * at once (max-age=0), stored for revalidation.
 */
function variantOrigin(path: string, etags: Record<string, string>): void {
  origin.on(path, (q, res) => {
    const etag = etags[String(q.headers['x-variant'])]!;
    if (q.headers['if-none-match'] === etag) {
      res.writeHead(304, { etag, 'cache-control': 'max-age=60', 'x-version': '2' });
      res.end();
      return;
    }
    reply(200, { etag, 'cache-control': 'max-age=0', vary: 'X-Variant', 'x-version': '1' }, `variant ${q.headers['x-variant']}`)(q, res);
  });
}

t.test('a 304 that revalidates one variant freshens every stored variant with the same strong ETag', async (t) => {
  variantOrigin('/variants', { a: '"same"', b: '"same"', c: '"other"' });
  for (const v of ['a', 'b', 'c']) t.equal((await get('/variants', { 'x-variant': v })).body, `variant ${v}`);
  const revalidated = await get('/variants', { 'x-variant': 'a' });
  t.equal(revalidated.headers['x-cache'], 'TCP_REFRESH_HIT');
  t.equal(revalidated.headers['x-version'], '2');
  const before = gets('/variants').length;
  const b = await get('/variants', { 'x-variant': 'b' });
  t.equal(b.body, 'variant b');
  t.equal(b.headers['x-cache'], 'TCP_HIT', 'variant b was freshened by the 304 of variant a');
  t.equal(b.headers['x-version'], '2', 'with the fields the 304 brought');
  t.equal(gets('/variants').length, before, 'no request for variant b reached the origin');
  const c = await get('/variants', { 'x-variant': 'c', 'cache-control': 'only-if-cached' });
  t.equal(c.status, 504, 'variant c (another ETag) is still stale');
});

t.test('a 304 with a weak ETag freshens only the variant it answered', async (t) => {
  variantOrigin('/weak', { a: 'W/"w"', b: 'W/"w"' });
  for (const v of ['a', 'b']) await get('/weak', { 'x-variant': v });
  t.equal((await get('/weak', { 'x-variant': 'a' })).headers['x-cache'], 'TCP_REFRESH_HIT');
  t.equal((await get('/weak', { 'x-variant': 'b', 'cache-control': 'only-if-cached' })).status, 504);
});
