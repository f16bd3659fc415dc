import t from 'tap';
import {
  evaluateRequest, withinStaleWhileRevalidate, staleIfErrorAllowed, computeTimes, formatHttpDate, defaultPolicyOptions,
  type HeaderMap,
} from '../../lib/cache/policy/index.js';

const T0 = Date.UTC(2024, 0, 10, 12, 0, 0);

/** An entry received at T0 with the given response Cache-Control, fresh for max-age seconds. */
function entry(cc: string, extra: HeaderMap = {}) {
  const headers: HeaderMap = { date: formatHttpDate(T0), 'cache-control': cc, ...extra };
  const { staleAt } = computeTimes({ status: 200, headers }, { requestTime: T0, cachedAt: T0 });
  return { status: 200, headers, requestTime: T0, cachedAt: T0, staleAt };
}
const at = (s: number) => T0 + s * 1000;

t.test('a fresh entry is served and a stale one is revalidated', async (t) => {
  const e = entry('max-age=60');
  t.equal(evaluateRequest({}, e, at(30)), 'fresh');
  t.equal(evaluateRequest({}, e, at(61)), 'revalidate');
});

t.test('the entry staleAt decides freshness, so an operator expire takes effect', async (t) => {
  t.equal(evaluateRequest({}, { ...entry('max-age=60'), staleAt: at(5) }, at(10)), 'revalidate');
});

t.test('a request no-cache forces revalidation even of a fresh entry', async (t) => {
  t.equal(evaluateRequest({ 'cache-control': 'no-cache' }, entry('max-age=60'), at(1)), 'client-revalidate');
});

t.test('Pragma: no-cache forces revalidation when the request has no Cache-Control', async (t) => {
  t.equal(evaluateRequest({ pragma: 'no-cache' }, entry('max-age=60'), at(1)), 'client-revalidate');
  t.equal(evaluateRequest({ pragma: 'no-cache', 'cache-control': 'max-stale' }, entry('max-age=60'), at(1)), 'fresh');
});

t.test('a request max-age refuses entries older than it', async (t) => {
  const e = entry('max-age=600');
  t.equal(evaluateRequest({ 'cache-control': 'max-age=100' }, e, at(50)), 'fresh');
  t.equal(evaluateRequest({ 'cache-control': 'max-age=100' }, e, at(150)), 'client-revalidate');
  t.equal(evaluateRequest({ 'cache-control': 'max-age=0' }, e, at(1)), 'client-revalidate');
});

t.test('a request min-fresh requires that much freshness left', async (t) => {
  const e = entry('max-age=100');
  t.equal(evaluateRequest({ 'cache-control': 'min-fresh=30' }, e, at(60)), 'fresh');
  t.equal(evaluateRequest({ 'cache-control': 'min-fresh=30' }, e, at(80)), 'client-revalidate');
});

t.test('a request max-stale accepts stale entries within its bound', async (t) => {
  const e = entry('max-age=60');
  t.equal(evaluateRequest({ 'cache-control': 'max-stale=30' }, e, at(80)), 'stale-ok');
  t.equal(evaluateRequest({ 'cache-control': 'max-stale=30' }, e, at(100)), 'revalidate');
  t.equal(evaluateRequest({ 'cache-control': 'max-stale' }, e, at(100_000)), 'stale-ok');
});

t.test('must-revalidate, proxy-revalidate and s-maxage forbid serving stale even with max-stale', async (t) => {
  for (const cc of ['max-age=60, must-revalidate', 'max-age=60, proxy-revalidate', 's-maxage=60']) {
    t.equal(evaluateRequest({ 'cache-control': 'max-stale' }, entry(cc), at(61)), 'revalidate', cc);
    t.equal(evaluateRequest({ 'cache-control': 'max-stale' }, entry(cc), at(59)), 'fresh', cc);
  }
});

t.test('a response no-cache without field names forces revalidation of a fresh entry', async (t) => {
  t.equal(evaluateRequest({}, entry('max-age=60, no-cache'), at(1)), 'revalidate');
  t.equal(evaluateRequest({}, entry('max-age=60, no-cache'), at(1), { ...defaultPolicyOptions, honourNoCache: false }), 'fresh',
    'unless honourNoCache is off');
});

t.test('a response no-cache with field names may be served fresh without those fields', async (t) => {
  t.equal(evaluateRequest({}, entry('max-age=60, no-cache="set-cookie"'), at(1)), 'fresh');
});

t.test('within stale-while-revalidate a stale entry is served while it is refreshed', async (t) => {
  const e = entry('max-age=60, stale-while-revalidate=30');
  t.equal(evaluateRequest({}, e, at(70)), 'stale-while-revalidate');
  t.equal(evaluateRequest({}, e, at(95)), 'revalidate');
  t.ok(withinStaleWhileRevalidate(e, at(70)));
  t.notOk(withinStaleWhileRevalidate(e, at(95)));
  t.notOk(withinStaleWhileRevalidate(entry('max-age=60'), at(70)));
});

t.test('stale-while-revalidate does not apply under must-revalidate', async (t) => {
  const e = entry('max-age=60, stale-while-revalidate=30, must-revalidate');
  t.equal(evaluateRequest({}, e, at(70)), 'revalidate');
  t.notOk(withinStaleWhileRevalidate(e, at(70)));
});

t.test('s-maxage implies proxy-revalidate: no stale-while-revalidate nor stale-if-error beside it (RFC 9111 5.2.2.10, 4.2.4)', async (t) => {
  const e = entry('s-maxage=60, stale-while-revalidate=30, stale-if-error=100');
  t.equal(evaluateRequest({}, e, at(70)), 'revalidate');
  t.notOk(withinStaleWhileRevalidate(e, at(70)));
  t.notOk(staleIfErrorAllowed({}, e, at(70), 'network'));
  t.notOk(staleIfErrorAllowed({ 'cache-control': 'stale-if-error=300' }, e, at(70), 503), 'nor a client stale-if-error');
});

t.test('only-if-cached answers 504 when the entry cannot be used without the origin', async (t) => {
  const oic = { 'cache-control': 'only-if-cached' };
  t.equal(evaluateRequest(oic, entry('max-age=60'), at(1)), 'fresh');
  t.equal(evaluateRequest(oic, entry('max-age=60'), at(61)), 'only-if-cached-miss');
  t.equal(evaluateRequest(oic, entry('max-age=60, no-cache'), at(1)), 'only-if-cached-miss');
  t.equal(evaluateRequest({ 'cache-control': 'only-if-cached, max-stale' }, entry('max-age=60'), at(61)), 'stale-ok');
});

t.test('a request no-store does not stop a fresh stored response from being served', async (t) => {
  t.equal(evaluateRequest({ 'cache-control': 'no-store' }, entry('max-age=60'), at(1)), 'fresh');
});

t.test('stale-if-error serves a stale entry when the origin fails or answers 500, 502, 503 or 504', async (t) => {
  const e = entry('max-age=60, stale-if-error=100');
  t.ok(staleIfErrorAllowed({}, e, at(100), 'network'));
  for (const s of [500, 502, 503, 504]) t.ok(staleIfErrorAllowed({}, e, at(100), s), String(s));
  t.notOk(staleIfErrorAllowed({}, e, at(100), 404), 'not for other statuses');
  t.notOk(staleIfErrorAllowed({}, e, at(200), 503), 'not beyond the window');
  t.notOk(staleIfErrorAllowed({}, entry('max-age=60'), at(100), 503), 'not without the directive');
});

t.test('a request stale-if-error also opens the window', async (t) => {
  t.ok(staleIfErrorAllowed({ 'cache-control': 'stale-if-error=300' }, entry('max-age=60'), at(200), 502));
});

t.test('must-revalidate forbids stale-if-error', async (t) => {
  t.notOk(staleIfErrorAllowed({}, entry('max-age=60, stale-if-error=100, must-revalidate'), at(100), 'network'));
  t.notOk(staleIfErrorAllowed({}, entry('max-age=60, stale-if-error=100, proxy-revalidate'), at(100), 'network'));
});
