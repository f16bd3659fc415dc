import t from 'tap';
import {
  freshness, freshnessLifetime, currentAge, initialAge, computeTimes, ageHeaderValue, parseHttpDate, formatHttpDate,
  defaultPolicyOptions, type CachePolicyOptions,
} from '../../lib/cache/policy/index.js';

const T0 = Date.UTC(2024, 0, 10, 12, 0, 0);
const d = (ms: number) => formatHttpDate(ms);
const opts = (o: Partial<CachePolicyOptions>): CachePolicyOptions => ({ ...defaultPolicyOptions, ...o });
const DAY = 86400_000;

t.test('s-maxage takes precedence over max-age for a shared cache', async (t) => {
  t.same(freshness({ status: 200, headers: { 'cache-control': 'max-age=10, s-maxage=100' } }), { lifetime: 100, source: 's-maxage' });
});

t.test('max-age takes precedence over Expires', async (t) => {
  t.equal(freshnessLifetime({ status: 200, headers: { 'cache-control': 'max-age=10', date: d(T0), expires: d(T0 + 1000_000) } }), 10);
});

t.test('Expires minus Date gives the lifetime', async (t) => {
  t.same(freshness({ status: 200, headers: { date: d(T0), expires: d(T0 + 300_000) } }), { lifetime: 300, source: 'expires' });
  t.equal(freshnessLifetime({ status: 200, headers: { date: d(T0), expires: d(T0 - 300_000) } }), 0, 'never negative');
  t.equal(freshnessLifetime({ status: 200, headers: { expires: d(T0 + 60_000) }, responseTime: T0 }), 60, 'response time stands in for a missing Date');
});

t.test('an invalid Expires such as 0, or several Expires, mean already expired (RFC 9111 5.3)', async (t) => {
  t.same(freshness({ status: 200, headers: { date: d(T0), expires: '0' } }), { lifetime: 0, source: 'expires' });
  t.equal(freshnessLifetime({ status: 200, headers: { date: d(T0), expires: [d(T0 + 60_000), d(T0 + 90_000)] } }), 0);
  t.equal(freshnessLifetime({ status: 200, headers: { date: d(T0), expires: '0', 'last-modified': d(T0 - 10 * DAY) } }), 0,
    'an explicit but invalid Expires forbids the heuristic');
});

t.test('CDN-Cache-Control replaces Expires as well as Cache-Control', async (t) => {
  const headers = { 'cdn-cache-control': 'public', 'cache-control': 'max-age=5', date: d(T0), expires: d(T0 + 600_000), 'last-modified': d(T0 - 100_000) };
  t.same(freshness({ status: 200, headers }), { lifetime: 10, source: 'heuristic' });
});

t.test('heuristic freshness is 10% of the Last-Modified age, only for cacheable-by-default statuses', async (t) => {
  const headers = { date: d(T0), 'last-modified': d(T0 - 1000_000) };
  t.same(freshness({ status: 200, headers }), { lifetime: 100, source: 'heuristic' });
  t.equal(freshnessLifetime({ status: 301, headers }), 100);
  t.equal(freshnessLifetime({ status: 302, headers }), 0, '302 is not cacheable by default');
  t.equal(freshnessLifetime({ status: 302, headers: { ...headers, 'cache-control': 'public' } }), 100, 'unless public');
  t.equal(freshnessLifetime({ status: 200, headers }, opts({ heuristicFraction: 0.5 })), 500);
});

t.test('the heuristic lifetime is capped by heuristicMax', async (t) => {
  const headers = { date: d(T0), 'last-modified': d(T0 - 3650 * DAY) };
  t.equal(freshnessLifetime({ status: 200, headers }), 86400);
  t.equal(freshnessLifetime({ status: 200, headers }, opts({ heuristicMax: 60 })), 60);
});

t.test('no heuristic without a valid Last-Modified', async (t) => {
  t.same(freshness({ status: 200, headers: { date: d(T0) } }), { lifetime: 0, source: 'none' });
  t.equal(freshnessLifetime({ status: 200, headers: { date: d(T0), 'last-modified': 'yesterday' } }), 0);
});

t.test('defaultTtl replaces the heuristic for 200 responses without explicit freshness', async (t) => {
  const headers = { date: d(T0), 'last-modified': d(T0 - 1000_000) };
  t.same(freshness({ status: 200, headers }, opts({ defaultTtl: 30 })), { lifetime: 30, source: 'default-ttl' });
  t.equal(freshnessLifetime({ status: 200, headers: { 'cache-control': 'max-age=5' } }, opts({ defaultTtl: 30 })), 5, 'explicit freshness wins');
  t.equal(freshnessLifetime({ status: 301, headers }, opts({ defaultTtl: 30 })), 100, 'only 200');
});

t.test('negativeTtl gives error statuses without freshness a short lifetime', async (t) => {
  t.same(freshness({ status: 404, headers: {} }), { lifetime: 10, source: 'negative-ttl' });
  t.equal(freshnessLifetime({ status: 503, headers: {} }, opts({ negativeTtl: 3 })), 0, '5xx only when opted in');
  t.equal(freshnessLifetime({ status: 503, headers: {} }, opts({ negativeTtl: 3, negativeServerErrors: true })), 3);
  t.equal(freshnessLifetime({ status: 404, headers: { 'cache-control': 'max-age=120' } }), 120);
  t.equal(freshnessLifetime({ status: 403, headers: {} }), 0);
});

t.test('apparent age is the response time minus Date, never negative', async (t) => {
  t.equal(initialAge({ headers: { date: d(T0) }, requestTime: T0 + 5000, cachedAt: T0 + 5000 }), 5);
  t.equal(initialAge({ headers: { date: d(T0 + 60_000) }, requestTime: T0, cachedAt: T0 }), 0, 'a clock ahead gives 0');
});

t.test('the corrected Age adds the response delay to the Age header', async (t) => {
  t.equal(initialAge({ headers: { date: d(T0), age: '100' }, requestTime: T0, cachedAt: T0 + 2000 }), 102);
  t.equal(initialAge({ headers: { date: d(T0), age: 'x' }, requestTime: T0, cachedAt: T0 }), 0, 'an invalid Age is ignored');
});

t.test('of an Age list the first member counts; a value that is not a non-negative integer is ignored (RFC 9111 5.1)', async (t) => {
  const age = (v: string | string[]): number => initialAge({ headers: { date: d(T0), age: v }, requestTime: T0, cachedAt: T0 });
  t.equal(age('5000, 0'), 5000, 'one line holding a list');
  t.equal(age(' 70 ,3'), 70, 'spaces around the member');
  t.equal(age(['300', '0']), 300, 'repeated lines');
  for (const bad of ['-5', '5.5', '+5', '0x10', '1e3', '', ' ', ', 5', '5 5']) t.equal(age(bad), 0, `"${bad}" is ignored`);
});

t.test('an Age beyond 2^31 counts as 2^31: such an object is never fresh', async (t) => {
  const headers = { 'cache-control': 'max-age=31536000', date: d(T0), age: '99999999999999999999999999' };
  t.equal(initialAge({ headers, requestTime: T0, cachedAt: T0 }), 2147483648);
  t.equal(computeTimes({ status: 200, headers }, { requestTime: T0, cachedAt: T0 }, opts({ keep: 0 })).staleAt, T0, 'stale when stored');
});

t.test('Age adds resident time to the corrected initial age', async (t) => {
  const meta = { headers: { date: d(T0), age: '10' }, requestTime: T0, cachedAt: T0 + 1000 };
  t.equal(currentAge(meta, T0 + 1000), 11);
  t.equal(currentAge(meta, T0 + 31_000), 41);
});

t.test('the Age header is whole seconds, 0 for nothing, capped at 2^31', async (t) => {
  t.equal(ageHeaderValue(41.9), '41');
  t.equal(ageHeaderValue(-3), '0');
  t.equal(ageHeaderValue(NaN), '0');
  t.equal(ageHeaderValue(1e12), '2147483648');
});

t.test('staleAt is the response time plus the lifetime minus the initial age', async (t) => {
  const times = computeTimes({ status: 200, headers: { 'cache-control': 'max-age=100', date: d(T0), age: '30' } }, { requestTime: T0, cachedAt: T0 }, opts({ keep: 0 }));
  t.equal(times.staleAt, T0 + 70_000);
  t.equal(times.deleteAt, T0 + 70_000);
  t.equal(times.lifetime, 100);
});

t.test('deleteAt keeps the entry for the longest of stale-while-revalidate, stale-if-error and keep', async (t) => {
  const base = { date: d(T0) };
  const at = (cc: string, extra: Record<string, string> = {}) =>
    computeTimes({ status: 200, headers: { ...base, ...extra, 'cache-control': cc } }, { requestTime: T0, cachedAt: T0 });
  t.equal(at('max-age=10, stale-while-revalidate=50').deleteAt, T0 + 60_000);
  t.equal(at('max-age=10, stale-while-revalidate=50, stale-if-error=500').deleteAt, T0 + 510_000);
  t.equal(at('max-age=10', { etag: '"a"' }).deleteAt, T0 + 10_000 + 3600_000, 'keep applies with a validator');
  t.equal(at('max-age=10').deleteAt, T0 + 10_000, 'keep needs a validator');
  t.equal(at('max-age=10, must-revalidate, stale-if-error=500').deleteAt, T0 + 10_000, 'must-revalidate forbids the stale windows');
});

t.test('HTTP dates are parsed in the three formats and anything else is invalid', async (t) => {
  const ms = Date.UTC(1994, 10, 6, 8, 49, 37);
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'), ms);
  t.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT'), ms);
  t.equal(parseHttpDate('Sun Nov  6 08:49:37 1994'), ms);
  for (const bad of ['0', '-1', '', 'Sun, 06 Nov 1994 08:49:37 PST', 'Sun, 06 Foo 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 25:49:37 GMT']) {
    t.ok(Number.isNaN(parseHttpDate(bad)), bad);
  }
});
