import t from 'tap';
import { isStorable, fieldsNotToStore, storableFields, responseDirectives, defaultPolicyOptions, type CachePolicyOptions } from '../../lib/cache/policy/index.js';

const GET = { method: 'GET', headers: {} };
const LM = 'Sun, 06 Nov 1994 08:49:37 GMT';
const opts = (o: Partial<CachePolicyOptions>): CachePolicyOptions => ({ ...defaultPolicyOptions, ...o });

t.test('only responses to GET are stored; HEAD responses only freshen', async (t) => {
  const res = { status: 200, headers: { 'cache-control': 'max-age=60' } };
  t.equal(isStorable(GET, res), true);
  t.equal(isStorable({ method: 'head', headers: {} }, res), 'method');
  t.equal(isStorable({ method: 'POST', headers: {} }, res), 'method');
});

t.test('a status the cache does not understand is stored with explicit freshness only; a 304 or a 1xx never', async (t) => {
  t.equal(isStorable(GET, { status: 299, headers: { 'cache-control': 'max-age=60' } }), true);
  t.equal(isStorable(GET, { status: 599, headers: { 'cache-control': 'public' } }), true);
  t.equal(isStorable(GET, { status: 299, headers: { etag: '"x"', 'last-modified': LM } }), 'no-freshness');
  t.equal(isStorable(GET, { status: 304, headers: { 'cache-control': 'max-age=60' } }), 'status');
  t.equal(isStorable(GET, { status: 101, headers: { 'cache-control': 'max-age=60' } }), 'status');
  t.equal(isStorable(GET, { status: 206, headers: { 'cache-control': 'max-age=60' } }), 'partial');
});

t.test('no-store in the response or in the request forbids storing', async (t) => {
  t.equal(isStorable(GET, { status: 200, headers: { 'cache-control': 'no-store, max-age=60' } }), 'no-store');
  t.equal(isStorable({ method: 'GET', headers: { 'cache-control': 'no-store' } }, { status: 200, headers: { 'cache-control': 'max-age=60' } }), 'no-store');
});

t.test('must-understand overrides no-store for an understood status', async (t) => {
  t.equal(isStorable(GET, { status: 200, headers: { 'cache-control': 'must-understand, no-store, max-age=60' } }), true);
  t.equal(isStorable(GET, { status: 299, headers: { 'cache-control': 'must-understand, no-store, max-age=60' } }), 'status');
});

t.test('a private response is not stored by a shared cache unless honourPrivate is off', async (t) => {
  const res = { status: 200, headers: { 'cache-control': 'private, max-age=60' } };
  t.equal(isStorable(GET, res), 'private');
  t.equal(isStorable(GET, res, opts({ honourPrivate: false })), true);
});

t.test('private with field names is stored without those fields', async (t) => {
  const res = { status: 200, headers: { 'cache-control': 'private="set-cookie", max-age=60' } };
  t.equal(isStorable(GET, res), true);
  t.same(fieldsNotToStore(responseDirectives(res.headers)), ['set-cookie']);
  t.same(fieldsNotToStore(responseDirectives(res.headers), opts({ honourPrivate: false })), []);
  const both = responseDirectives({ 'cache-control': 'max-age=60, private="set-cookie", no-cache="x-token, set-cookie"' });
  t.same(fieldsNotToStore(both), ['set-cookie', 'x-token'], 'no-cache field names are not stored either');
  t.same(fieldsNotToStore(both, opts({ honourNoCache: false })), ['set-cookie']);
  const h = { 'cache-control': 'max-age=60, private="set-cookie"', 'set-cookie': 'a=1', 'content-type': 'text/plain' };
  t.same(storableFields(h), { 'cache-control': 'max-age=60, private="set-cookie"', 'content-type': 'text/plain' });
  t.equal(h['set-cookie'], 'a=1', 'the original is untouched');
});

t.test('a response with Authorization in the request is stored only with public, must-revalidate or s-maxage', async (t) => {
  const req = { method: 'GET', headers: { authorization: 'Basic eDp5' } };
  t.equal(isStorable(req, { status: 200, headers: { 'cache-control': 'max-age=60' } }), 'authorization');
  t.equal(isStorable(req, { status: 200, headers: { 'cache-control': 'max-age=60, public' } }), true);
  t.equal(isStorable(req, { status: 200, headers: { 'cache-control': 'max-age=60, must-revalidate' } }), true);
  t.equal(isStorable(req, { status: 200, headers: { 'cache-control': 's-maxage=60' } }), true);
});

t.test('explicit freshness makes any understood status storable', async (t) => {
  t.equal(isStorable(GET, { status: 302, headers: { 'cache-control': 'max-age=60' } }), true);
  t.equal(isStorable(GET, { status: 302, headers: { expires: 'Thu, 01 Jan 2099 00:00:00 GMT' } }), true);
  t.equal(isStorable(GET, { status: 403, headers: { 'cache-control': 's-maxage=5' } }), true);
  t.equal(isStorable(GET, { status: 302, headers: {} }), 'no-freshness');
});

t.test('a cacheable-by-default status without freshness is stored only when it has a validator', async (t) => {
  t.equal(isStorable(GET, { status: 200, headers: { 'last-modified': LM } }), true);
  t.equal(isStorable(GET, { status: 301, headers: { etag: '"a"' } }), true);
  t.equal(isStorable(GET, { status: 200, headers: {} }), 'no-freshness');
  t.equal(isStorable(GET, { status: 303, headers: { etag: '"a"' } }), 'no-freshness', '303 is not cacheable by default');
});

t.test('public makes a response storable without freshness or validator', async (t) => {
  t.equal(isStorable(GET, { status: 200, headers: { 'cache-control': 'public' } }), true);
  t.equal(isStorable(GET, { status: 302, headers: { 'cache-control': 'public' } }), true);
});

t.test('no-cache responses are storable (they are revalidated on every use)', async (t) => {
  t.equal(isStorable(GET, { status: 200, headers: { 'cache-control': 'no-cache', etag: '"x"' } }), true);
});

t.test('defaultTtl makes 200 responses without freshness storable', async (t) => {
  t.equal(isStorable(GET, { status: 200, headers: {} }, opts({ defaultTtl: 300 })), true);
  t.equal(isStorable(GET, { status: 302, headers: {} }, opts({ defaultTtl: 300 })), 'no-freshness');
});

t.test('negativeTtl makes 404 and 410 without freshness storable by default, 5xx gateway errors only when opted in', async (t) => {
  for (const status of [404, 410]) t.equal(isStorable(GET, { status, headers: {} }), true, String(status));
  for (const status of [500, 502, 503, 504]) {
    t.equal(isStorable(GET, { status, headers: {} }), 'no-freshness', `${status}: not cacheable by default`);
    t.equal(isStorable(GET, { status, headers: {} }, opts({ negativeServerErrors: true })), true, `${status} opted in`);
  }
  for (const status of [400, 403, 429]) t.equal(isStorable(GET, { status, headers: {} }, opts({ negativeServerErrors: true })), 'no-freshness', String(status));
  t.equal(isStorable(GET, { status: 404, headers: {} }, opts({ negativeTtl: 0 })), 'no-freshness');
  t.equal(isStorable(GET, { status: 503, headers: { 'cache-control': 'no-store' } }), 'no-store', 'no-store still wins');
});

t.test('Vary: * is not stored because it never matches', async (t) => {
  t.equal(isStorable(GET, { status: 200, headers: { 'cache-control': 'max-age=60', vary: 'accept, *' } }), 'vary-star');
});

t.test('CDN-Cache-Control decides storing over Cache-Control', async (t) => {
  t.equal(isStorable(GET, { status: 200, headers: { 'cache-control': 'no-store', 'cdn-cache-control': 'max-age=60' } }), true);
  t.equal(isStorable(GET, { status: 200, headers: { 'cache-control': 'max-age=60', 'cdn-cache-control': 'no-store' } }), 'no-store');
});
