import t from 'tap';
import {
  invalidationTargets, isSafeMethod, CACHE_RESULTS, isCacheResult, hitResult, TCP_HIT, TCP_NEGATIVE_HIT, TCP_REDIRECT_HIT,
  TCP_RATE_LIMITED,
} from '../../lib/cache/policy/index.js';

t.test('a successful unsafe request invalidates its target URI', async (t) => {
  for (const m of ['POST', 'PUT', 'DELETE', 'PATCH', 'put']) t.same(invalidationTargets(m, 200, '/a?x=1', {}, 'www.v.com'), ['/a?x=1'], m);
  t.same(invalidationTargets('POST', 303, '/a', {}, 'www.v.com'), ['/a'], '3xx counts as non-error');
});

t.test('a method not known to be safe invalidates too', async (t) => {
  t.same(invalidationTargets('PURGEX', 204, '/a', {}, 'v.com'), ['/a']);
  t.notOk(isSafeMethod('MKCOL'));
});

t.test('safe methods and error answers invalidate nothing', async (t) => {
  for (const m of ['GET', 'HEAD', 'OPTIONS', 'TRACE']) t.same(invalidationTargets(m, 200, '/a', {}, 'v.com'), [], m);
  t.same(invalidationTargets('POST', 404, '/a', {}, 'v.com'), []);
  t.same(invalidationTargets('POST', 500, '/a', {}, 'v.com'), []);
  t.same(invalidationTargets('POST', 100, '/a', {}, 'v.com'), []);
});

t.test('Location and Content-Location of the same host are invalidated as well', async (t) => {
  t.same(invalidationTargets('POST', 201, '/items', { location: '/items/7', 'content-location': 'http://www.v.com/items/7?v=2' }, 'www.v.com'),
    ['/items', '/items/7', '/items/7?v=2']);
  t.same(invalidationTargets('PUT', 200, '/dir/a', { 'content-location': 'b' }, 'v.com'), ['/dir/a', '/dir/b'], 'relative to the target');
  t.same(invalidationTargets('PUT', 200, '/a', { location: '/a' }, 'v.com'), ['/a'], 'no duplicates');
});

t.test('Location and Content-Location of another host are never invalidated', async (t) => {
  t.same(invalidationTargets('POST', 201, '/a', { location: 'http://evil.com/a', 'content-location': 'http://www.v.com:8080/b' }, 'www.v.com'), ['/a']);
  t.same(invalidationTargets('POST', 201, 'https://v.com/a', { location: 'http://v.com/b' }, 'v.com'), ['/a'], 'nor of another scheme');
});

t.test('the cache results list every TCP_* code once', async (t) => {
  t.equal(new Set(CACHE_RESULTS).size, 14);
  t.ok(isCacheResult('TCP_DENY'), 'TCP_DENY: a hook ended the transaction');
  t.ok(isCacheResult('TCP_REF_FAIL_HIT'));
  t.notOk(isCacheResult('TCP_WHATEVER'));
  t.equal(TCP_RATE_LIMITED, 'TCP_RATE_LIMITED');
});

t.test('a hit on a cached error is a NEGATIVE_HIT and on a redirect a REDIRECT_HIT', async (t) => {
  t.equal(hitResult(200), TCP_HIT);
  t.equal(hitResult(404), TCP_NEGATIVE_HIT);
  t.equal(hitResult(503), TCP_NEGATIVE_HIT);
  t.equal(hitResult(301), TCP_REDIRECT_HIT);
});
