import t from 'tap';
import { parseCacheControl, responseDirectives, requestDirectives, fieldsToStrip, DELTA_SECONDS_MAX } from '../../lib/cache/policy/index.js';

t.test('every response and request directive is recognised', async (t) => {
  const d = parseCacheControl('max-age=60, s-maxage=120, no-store, public, must-revalidate, proxy-revalidate, no-transform, immutable, stale-while-revalidate=30, stale-if-error=600, min-fresh=5, only-if-cached, must-understand');
  t.match(d, {
    maxAge: 60, sMaxage: 120, noStore: true, public: true, mustRevalidate: true, proxyRevalidate: true,
    noTransform: true, immutable: true, staleWhileRevalidate: 30, staleIfError: 600, minFresh: 5, onlyIfCached: true, mustUnderstand: true,
  });
  t.equal(d.noCache, undefined);
  t.equal(d.private, undefined);
  t.equal(parseCacheControl('max-stale').maxStale, true);
  t.equal(parseCacheControl('max-stale=10').maxStale, 10);
});

t.test('directive names are case-insensitive and whitespace around members is ignored', async (t) => {
  t.match(parseCacheControl('  MAX-AGE=10 ,Public,,  No-Store '), { maxAge: 10, public: true, noStore: true });
});

t.test('no-cache and private carry either true or the quoted list of field names', async (t) => {
  t.equal(parseCacheControl('no-cache').noCache, true);
  t.same(parseCacheControl('no-cache="Set-Cookie, x-a"').noCache, ['set-cookie', 'x-a']);
  t.same(parseCacheControl('private="x-user", max-age=5').private, ['x-user']);
  t.equal(parseCacheControl('private="x-user", max-age=5').maxAge, 5, 'a comma inside quotes does not end the directive');
  t.same(parseCacheControl('no-cache=set-cookie').noCache, ['set-cookie'], 'the token form is accepted too');
});

t.test('a bare no-cache wins over a field-name list (the most restrictive directive is honoured)', async (t) => {
  t.equal(parseCacheControl('no-cache="a", no-cache').noCache, true);
  t.same(parseCacheControl('no-cache="a", no-cache="b"').noCache, ['a', 'b']);
});

t.test('quoted strings may contain escaped quotes and the quoted form of delta-seconds is accepted', async (t) => {
  t.equal(parseCacheControl('max-age="30"').maxAge, 30);
  t.same(parseCacheControl('no-cache="a\\"b", public').noCache, ['a"b']);
  t.equal(parseCacheControl('no-cache="a\\"b", public').public, true);
});

t.test('a duplicated max-age makes the response stale (RFC 9111 4.2.1)', async (t) => {
  t.equal(parseCacheControl('max-age=60, max-age=120').maxAge, 0);
  t.equal(parseCacheControl(['max-age=60', 'max-age=60']).maxAge, 0, 'also across field lines');
  t.equal(parseCacheControl('s-maxage=60, s-maxage=10').sMaxage, 0);
});

t.test('an invalid max-age or s-maxage makes the response stale', async (t) => {
  for (const v of ['max-age=abc', 'max-age=-1', 'max-age=1.5', 'max-age', 'max-age=']) t.equal(parseCacheControl(v).maxAge, 0, v);
  t.equal(parseCacheControl('s-maxage=x').sMaxage, 0);
});

t.test('delta-seconds larger than 2^31 are taken as 2^31 (RFC 9111 1.2.2)', async (t) => {
  t.equal(parseCacheControl('max-age=99999999999999999999').maxAge, DELTA_SECONDS_MAX);
});

t.test('invalid stale windows are ignored and duplicates keep the most restrictive value', async (t) => {
  t.equal(parseCacheControl('stale-while-revalidate=x').staleWhileRevalidate, undefined);
  t.equal(parseCacheControl('stale-if-error=60, stale-if-error=30').staleIfError, 30);
  t.equal(parseCacheControl('min-fresh=5, min-fresh=10').minFresh, 10);
  t.equal(parseCacheControl('max-stale, max-stale=5').maxStale, 5);
});

t.test('unknown extension directives are ignored', async (t) => {
  t.match(parseCacheControl('community="UCI", foo=bar, max-age=7'), { maxAge: 7 });
});

t.test('CDN-Cache-Control replaces Cache-Control for this cache', async (t) => {
  const d = responseDirectives({ 'cache-control': 'no-store, max-age=5', 'cdn-cache-control': 'max-age=600' });
  t.equal(d.maxAge, 600);
  t.equal(d.noStore, false, 'directives only in Cache-Control are ignored');
  t.equal(d.targeted, true);
  t.equal(responseDirectives({ 'cache-control': 'max-age=5' }).targeted, false);
});

t.test('an empty or unparsable CDN-Cache-Control counts as absent (RFC 9213 2.2)', async (t) => {
  t.equal(responseDirectives({ 'cache-control': 'max-age=5', 'cdn-cache-control': '  ' }).maxAge, 5);
  t.equal(responseDirectives({ 'cache-control': 'max-age=5', 'cdn-cache-control': 'private="unterminated' }).maxAge, 5);
});

t.test('Pragma: no-cache counts as no-cache only when the request has no Cache-Control', async (t) => {
  t.equal(requestDirectives({ pragma: 'no-cache' }).noCache, true);
  t.equal(requestDirectives({ pragma: 'no-cache', 'cache-control': 'max-age=10' }).noCache, undefined);
  t.equal(requestDirectives({ pragma: 'x-foo' }).noCache, undefined);
});

t.test('the fields to strip are those named by no-cache and private', async (t) => {
  t.same(fieldsToStrip(parseCacheControl('no-cache="set-cookie", private="x-a, set-cookie"')), ['set-cookie', 'x-a']);
  t.same(fieldsToStrip(parseCacheControl('no-cache')), []);
});
