// The hook's answer checked in-process: what carries out, what is an error answer (510), and the
// %{...}N fields of the custom access log.
import t from 'tap';
import { HookAnswerError, hookField, parseHookAnswer } from '../../lib/hook/answer.js';

t.test('a continue answer with every redefinition is typed as given', async (t) => {
  const a = parseHookAnswer(JSON.stringify({
    response: { code: 100 }, cacheKey: '/k', cacheTtl: 30, cacheResult: 'TCP_HIT', vhost: 'B.test',
    request: { headers: [{ key: 'X-A', value: '1', mode: 'add' }] },
    originRequest: { method: 'put', url: '/o', body: 'ignored for GET', headers: [{ key: 'Host', value: 'x' }, { key: 'X-B', value: '2' }] },
  }));
  t.equal(a.end, undefined);
  t.equal(a.cacheKey, '/k');
  t.equal(a.cacheTtl, 30);
  t.equal(a.cacheResult, 'TCP_HIT');
  t.equal(a.vhost, 'b.test');
  t.match(a.headerEdits, [{ key: 'x-a', mode: 'add', value: '1' }]);
  t.strictSame(a.originRequest, { method: 'GET', url: '/o', body: undefined, headers: [{ key: 'x-b', value: '2' }] }, 'other methods are GET; Host is dropped');
});

t.test('a final code ends the transaction with its body and headers; cacheKey null is kept apart from absent', async (t) => {
  const a = parseHookAnswer('{"response":{"code":302,"headers":[{"key":"Location","value":"/x"}]},"cacheKey":null}');
  t.strictSame(a.end, { code: 302, body: '', headers: [{ key: 'location', value: '/x' }] });
  t.equal(a.cacheKey, null);
  t.equal(parseHookAnswer('{"response":{"code":100}}').cacheKey, undefined);
});

t.test('answers the runtime cannot carry out are error answers', async (t) => {
  const bad = [
    'nope', '[]', '{}', '{"response":{"code":99}}', '{"response":{"code":100},"cacheTtl":-1}',
    '{"response":{"code":100},"cacheResult":"TCP_WHATEVER"}', '{"response":{"code":100},"request":{"headers":[{"key":"X","value":"v","mode":"rewrite"}]}}',
    '{"response":{"code":100},"request":{"headers":[{"key":"Content-Length","value":"1"}]}}',
    '{"response":{"code":100},"originRequest":{"url":"no-slash"}}', '{"response":{"code":200,"headers":[{"key":"X","value":"a\\nb"}]}}',
    '{"name":"svchook1","code":503,"body":"busy"}',
  ];
  for (const b of bad) {
    let err: unknown;
    try { parseHookAnswer(b); } catch (e) { err = e; }
    t.ok(err instanceof HookAnswerError, b);
  }
  t.throws(() => parseHookAnswer('{"name":"svchook1","code":503,"body":"busy"}'), { message: 'svchook1 503: busy' });
});

t.test('%{...}N reads dotted members and {key, value} lists by key', async (t) => {
  const f = { cacheKey: '/k', userData: { tier: 'gold', n: 2 }, originRequest: { headers: [{ key: 'X-Custom-Header', value: 'v' }] } };
  t.equal(hookField(f, 'cacheKey'), '/k');
  t.equal(hookField(f, 'userData.tier'), 'gold');
  t.equal(hookField(f, 'userData.n'), '2');
  t.equal(hookField(f, 'originRequest.headers[x-custom-header]'), 'v');
  t.equal(hookField(f, 'userData.none'), undefined);
  t.equal(hookField(f, 'cacheKey.deeper'), undefined);
});
