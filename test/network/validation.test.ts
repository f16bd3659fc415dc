// The network rules and fallbacks at validation: each fault refused at the JSON path of its member,
// with a message saying what to change.
import t from 'tap';
import { issuesOf, minimalHost } from '../setting/fixtures/helpers.js';

const host = (extra: Record<string, unknown>) => ({ ...minimalHost, ...extra });
const net = (network: Record<string, unknown>) => ({ network });

t.test('a modify pattern or header edit that cannot work is refused at its path', async (t) => {
  const modify = { matchingList: [
    { pattern: '$URL[(]', headers: [{ key: 'X-A', value: '1' }] },
    { headers: [{ key: 'Content-Length', value: '0' }] },
    { headers: [{ key: 'bad name', value: '1' }] },
    { responseHeaders: [{ key: 'X-B', mode: 'rewrite', value: 'x' }] },
    { responseHeaders: [{ key: 'X-C', mode: 'set', match: 'a', value: 'x' }] },
  ] };
  const issues = issuesOf({ functions: net({ http: { frontEnd: { modify } } }) });
  t.same(issues.map((i) => i.path), ['functions.network.http.frontEnd.modify.matchingList[0].pattern']);
  const each = (i: number) => issuesOf({ functions: net({ http: { backEnd: { modify: { matchingList: [modify.matchingList[i]] } } } }) })[0]!;
  t.strictSame(each(1), { path: 'functions.network.http.backEnd.modify.matchingList[0].headers[0]', message: 'content-length frames the message and cannot be edited' });
  t.match(each(2), { path: 'functions.network.http.backEnd.modify.matchingList[0].headers[0]', message: /not a header field name/ });
  t.match(each(3), { path: 'functions.network.http.backEnd.modify.matchingList[0].responseHeaders[0]', message: /rewrite needs match/ });
  t.match(each(4), { path: 'functions.network.http.backEnd.modify.matchingList[0].responseHeaders[0]', message: /match is for mode rewrite only/ });
});

t.test('a bad mode is refused by the schema with the allowed values', async (t) => {
  const issues = issuesOf({ functions: net({ http: { frontEnd: { modify: { matchingList: [{ headers: [{ key: 'X', mode: 'replace' }] }] } } } }) });
  t.equal(issues[0]!.path, 'functions.network.http.frontEnd.modify.matchingList[0].headers[0].mode');
  t.match(issues[0]!.message, /"set", "add", "append", "unset", "rewrite"/);
});

t.test('a host\'s own bypass pattern is checked at the host\'s path', async (t) => {
  const issues = issuesOf({ hosting: [host({ functions: net({ http: { frontEnd: { bypass: { matchingList: [{ pattern: '$METHOD[GET]' }, { pattern: '$NOPE[x]' }] } } } }) })] });
  t.same(issues.map((i) => i.path), ['hosting[0].functions.network.http.frontEnd.bypass.matchingList[1].pattern']);
});

t.test('cachingKey: keep and ignore together, or either with the query out of the key, are refused', async (t) => {
  const ck = (queryString: Record<string, unknown>) => issuesOf({ functions: net({ cache: { cachingKey: { queryString } } }) });
  t.match(ck({ keep: ['a'], ignore: ['b'] }), [{ path: 'functions.network.cache.cachingKey.queryString.keep', message: /exclude each other/ }]);
  t.match(ck({ enable: false, sort: true }), [{ path: 'functions.network.cache.cachingKey.queryString.enable' }]);
  t.match(issuesOf({ functions: net({ cache: { cachingKey: { headers: ['x y'] } } }) }), [{ path: 'functions.network.cache.cachingKey.headers[0]' }]);
  t.strictSame(ck({ sort: true, ignore: ['utm_source'] }), []);
});

t.test('fallback patterns follow document 2\'s $RESHEADER table and take only their conditions', async (t) => {
  const fb = (pattern: string) => issuesOf({ hosting: [host({ fallbacks: { enable: true, matchingList: [{ resCodes: ['5xx'], pattern, replace: '/x' }] } })] });
  t.strictSame(fb('$RESHEADER[Content-Type: text/*]&$URL[^a\\.com/(.*)]'), []);
  t.strictSame(fb('$RESHEADER[Set-Cookie]'), [], 'a custom field is accepted: it matches under an instant bypass');
  t.match(fb('$RESHEADER[Content-Length: 0]'), [{ path: 'hosting[0].fallbacks.matchingList[0].pattern', message: /content-length cannot be matched/ }]);
  t.match(fb('$RESHEADER[Retry-After]'), [{ path: 'hosting[0].fallbacks.matchingList[0].pattern', message: /cacheOriginal/ }]);
  t.match(fb('$METHOD[GET]'), [{ path: 'hosting[0].fallbacks.matchingList[0].pattern', message: /METHOD\[\.\.\.\] cannot be used here/ }]);
  t.match(fb('$RESHEADER[Bad Name: x]'), [{ path: 'hosting[0].fallbacks.matchingList[0].pattern', message: /not a header name/ }]);
  const none = issuesOf({ hosting: [host({ fallbacks: { enable: true, matchingList: [{ resCodes: [] }] } })] });
  t.match(none, [{ path: 'hosting[0].fallbacks.matchingList[0].resCodes', message: 'resCodes lists no code' }]);
});
