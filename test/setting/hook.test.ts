// functions.hook at load: the hook URL, matchingList patterns, and the POST prerequisites of
// document 2 are refused at their JSON path with a message saying what to set.
import t from 'tap';
import { issuesOf, minimalHost } from './fixtures/helpers.js';

const hook = { enable: true, path: 'http://127.0.0.1:9999/hook' };
const postCaching = {
  http: { frontEnd: { bypass: { postMethod: { enable: false } } } },
  cache: { cachingKey: { postMethod: { enable: true, bodySensitive: true } } },
};
const withHost = (functions: unknown) => ({ hosting: [{ ...minimalHost, functions }] });

t.test('a hook with POSTs bypassed by method (the default) loads: those POSTs are not hooked', async (t) => {
  t.strictSame(issuesOf(withHost({ hook })), []);
});

t.test('a hook with the POST recipe of document 2 loads', async (t) => {
  t.strictSame(issuesOf(withHost({ hook, network: postCaching })), []);
});

t.test('POSTs neither bypassed nor cached pass unhooked, as a bypass: the setting loads', async (t) => {
  t.strictSame(issuesOf(withHost({ hook, network: { http: { frontEnd: { bypass: { postMethod: { enable: false } } } } } })), []);
});

t.test('POST caching without bodySensitive is refused for a hook', async (t) => {
  const network = { ...postCaching, cache: { cachingKey: { postMethod: { enable: true, bodySensitive: false } } } };
  t.strictSame(issuesOf(withHost({ hook, network })).map((i) => i.path), ['hosting[0].functions.network.cache.cachingKey.postMethod.bodySensitive']);
});

t.test('POST caching with bypass.postMethod still on is refused for a hook', async (t) => {
  const network = { cache: postCaching.cache };
  t.strictSame(issuesOf(withHost({ hook, network })).map((i) => i.path), ['hosting[0].functions.network.http.frontEnd.bypass.postMethod.enable']);
});

t.test('the global hook is checked once, at functions', async (t) => {
  const issues = issuesOf({ functions: { hook: { ...hook, path: 'ftp://x/hook' } }, hosting: [minimalHost] });
  t.strictSame(issues.map((i) => i.path), ['functions.hook.path']);
});

t.test('a hook URL that is not absolute http(s), and a bad matchingList pattern, are refused at their paths', async (t) => {
  t.strictSame(issuesOf(withHost({ hook: { ...hook, path: '/relative' } })).map((i) => i.path), ['hosting[0].functions.hook.path']);
  const bad = issuesOf(withHost({ hook: { ...hook, matchingList: [{ pattern: '$URL[/ok]' }, { pattern: '$NOPE[x]' }] } }));
  t.strictSame(bad.map((i) => i.path), ['hosting[0].functions.hook.matchingList[1].pattern']);
});

t.test('a disabled hook is not checked', async (t) => {
  t.strictSame(issuesOf(withHost({ hook: { enable: false, path: 'nonsense' }, network: { http: { frontEnd: { bypass: { postMethod: { enable: false } } } } } })), []);
});
