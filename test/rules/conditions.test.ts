import t from 'tap';
import { compilePattern, compileReplace, MATCHED, type RuleInput } from '../../lib/rules/conditions.js';

function input(over: Partial<RuleInput> = {}): RuleInput {
  return { host: 'example.com', url: '/a/b.jpg?x=1', subject: undefined, method: 'GET', headers: {}, protocol: 'http', clientAddress: '10.1.2.3', functions: [], ...over };
}
const cs = { caseSensitive: true, allowUrl: true };

t.test('URL[regex] captures groups and #0..#9 substitute them', async (t) => {
  const p = compilePattern('$URL[^example\\.com/([^/]+)/(.*)]', cs);
  const m = p.match(input());
  t.ok(m);
  t.equal(compileReplace('other.com/#2/#1?whole=#0')(m!), 'other.com/b.jpg?x=1/a?whole=example.com/a/b.jpg?x=1');
  t.equal(p.match(input({ host: 'www.example.com', url: '/a/b' })), undefined, 'the ^ anchor keeps a longer host out');
  t.same(p.entries, ['$URL[^example\\.com/([^/]+)/(.*)]']);
});

t.test('conditions are joined by & and each but URL may be negated', async (t) => {
  const p = compilePattern('$URL[/a/(.*)] & !IP[10.1.2.0/24] & $METHOD[GET;POST]', cs);
  t.equal(p.match(input()), undefined, 'the client is in the negated subnet');
  t.ok(p.match(input({ clientAddress: '10.1.3.3' })));
  t.equal(p.match(input({ clientAddress: '10.1.3.3', method: 'PUT' })), undefined);
  t.throws(() => compilePattern('!URL[/a]', cs), /cannot be negated/);
  t.throws(() => compilePattern('$URL[/a]&$URL[/b]', cs), /at most one/);
});

t.test('a pattern without URL[...] matches as a whole without captures', async (t) => {
  t.equal(compilePattern('$URLMATCH[\\.jpg]', cs).match(input()), MATCHED);
  t.equal(compilePattern('!URLMATCH[\\.jpg]', cs).match(input()), undefined);
});

t.test('IP takes single addresses, last-octet ranges, bitmasks, subnets and lists', async (t) => {
  for (const v of ['10.1.2.3', '10.1.2.1-9', '10.1.0.0/16', '10.0.0.0/255.0.0.0', '192.168.0.1;10.1.2.3']) {
    t.ok(compilePattern(`$IP[${v}]`, cs).match(input()), v);
  }
  t.equal(compilePattern('$IP[10.1.2.4-9]', cs).match(input()), undefined);
  t.ok(compilePattern('$IP[10.1.2.3]', cs).match(input({ clientAddress: '::ffff:10.1.2.3' })), 'IPv4-mapped IPv6 is IPv4');
  t.throws(() => compilePattern('$IP[10.1.2]', cs), /expected an address/);
});

t.test('a country code needs GeoIP and uses it', async (t) => {
  t.throws(() => compilePattern('$IP[KR]', cs), /needs GeoIP/);
  const geo = (a: string): string | undefined => (a === '10.1.2.3' ? 'KR' : undefined);
  const p = compilePattern('$IP[kr]', { ...cs, geo });
  t.ok(p.match(input()));
  t.equal(p.match(input({ clientAddress: '10.9.9.9' })), undefined);
  t.ok(compilePattern('!IP[KR]', { ...cs, geo }).match(input({ clientAddress: '10.9.9.9' })), 'an unknown address is not in KR');
});

t.test('HEADER: a value pattern, an empty value, or presence alone; names in any case', async (t) => {
  const h = { 'user-agent': 'curl/8.0', 'x-empty': '' };
  t.ok(compilePattern('$HEADER[User-Agent: curl/*]', cs).match(input({ headers: h })));
  t.equal(compilePattern('$HEADER[User-Agent: CURL/*]', cs).match(input({ headers: h })), undefined);
  t.ok(compilePattern('$HEADER[User-Agent: CURL/*]', { ...cs, caseSensitive: false }).match(input({ headers: h })));
  t.ok(compilePattern('$HEADER[X-Empty:]', cs).match(input({ headers: h })));
  t.equal(compilePattern('$HEADER[User-Agent:]', cs).match(input({ headers: h })), undefined);
  t.ok(compilePattern('$HEADER[x-empty]', cs).match(input({ headers: h })));
  t.ok(compilePattern('!HEADER[Cookie]', cs).match(input({ headers: h })));
  const mobile = compilePattern('$HEADER[User-Agent: *Mobile*]', cs);
  t.ok(mobile.match(input({ headers: { 'user-agent': 'Mozilla/5.0 (iPhone) Mobile/15E148' } })), 'the wildcard form of document 2');
  t.equal(mobile.match(input({ headers: { 'user-agent': 'Mozilla/5.0 (X11)' } })), undefined);
  t.equal(compilePattern('$HEADER[X-V: a.c]', cs).match(input({ headers: { 'x-v': 'abc' } })), undefined, 'a dot is a dot, not any character');
});

t.test('case sensitivity applies to URL and URLMATCH', async (t) => {
  t.equal(compilePattern('$URL[/A/(.*)]', cs).match(input()), undefined);
  t.ok(compilePattern('$URL[/A/(.*)]', { ...cs, caseSensitive: false }).match(input()));
  t.ok(compilePattern('$URLMATCH[B\\.JPG]', { ...cs, caseSensitive: false }).match(input()));
});

t.test('PROTOCOL and FUNCTION', async (t) => {
  t.ok(compilePattern('$PROTOCOL[https|http2]', cs).match(input({ protocol: 'http2' })));
  t.equal(compilePattern('$PROTOCOL[https]', cs).match(input()), undefined);
  t.throws(() => compilePattern('$PROTOCOL[ftp]', cs), /not http, https or http2/);
  t.equal(compilePattern('$FUNCTION[*]', cs).match(input()), undefined);
  t.ok(compilePattern('$FUNCTION[*]', cs).match(input({ functions: ['pagedesk'] })));
  t.ok(compilePattern('$FUNCTION[pagedesk]', cs).match(input({ functions: ['pagedesk'] })));
});

t.test('bad patterns say what is wrong', async (t) => {
  t.throws(() => compilePattern('$URL[(]', cs), /URL\[\(\]/);
  t.throws(() => compilePattern('$FOO[x]', cs), /not a condition/);
  t.throws(() => compilePattern('$URL[/a', cs), /no closing/);
  t.throws(() => compilePattern('$URL[/a] $IP[1.2.3.4]', cs), /expected &/);
  t.throws(() => compilePattern('$URL[/a]', { ...cs, allowUrl: false }), /URLMATCH/);
  t.throws(() => compilePattern('$METHOD[]', cs), /lists nothing/);
});

t.test('a regex with classes and escaped brackets stays one condition', async (t) => {
  const p = compilePattern('$URL[^example\\.com/([^/\\]]+)/(.*)]&$METHOD[GET]', cs);
  t.equal(p.entries.length, 2);
  t.equal(p.match(input())![1], 'a');
});

t.test('an anchored regex turns a request down by its literal start, and still matches what it should', async (t) => {
  const m = (re: string, host: string, url: string): boolean => compilePattern(`$URL[${re}]`, cs).match(input({ host, url })) !== undefined;
  t.ok(m('^example\\.com/a/(.*)', 'example.com', '/a/b'));
  t.notOk(m('^example\\.com/a/(.*)', 'example.com', '/b/a'));
  t.notOk(m('^example\\.com/a/(.*)', 'example.co', 'm/a/b'.slice(1)));
  t.ok(m('^exam', 'example.com', '/'), 'a prefix shorter than the host');
  t.ok(m('^example\\.comx?/', 'example.com', '/'), 'a quantified character is not required');
  t.ok(m('^example\\.com/a*/', 'example.com', '//'));
  t.ok(m('^example\\.com/a{0,2}/', 'example.com', '//'));
  t.ok(m('^x|example', 'example.com', '/'), 'an alternation is not cut to a prefix');
  t.ok(m('^example\\.com/\\d+', 'example.com', '/42'), 'an escape class ends the literal');
  t.ok(m('^example\\.com/(a|b)', 'example.com', '/b'));
  t.ok(m('^example\\.com/[ab]', 'example.com', '/b'));
  t.ok(compilePattern('$URLMATCH[^example\\.com/a]', cs).match(input({ url: '/a' })));
  t.notOk(compilePattern('$URLMATCH[^example\\.com/a]', cs).match(input({ url: '/b' })));
  t.ok(compilePattern('$URL[^EXAMPLE\\.com/a]', { ...cs, caseSensitive: false }).match(input({ url: '/a' })), 'case-insensitive regexes are not cut');
});

t.test('the prefilters of unanchored and case-insensitive patterns never turn down a real match', async (t) => {
  const m = (re: string, host: string, url: string, caseSensitive = true): boolean =>
    compilePattern(`$URL[${re}]`, { caseSensitive, allowUrl: true }).match(input({ host, url })) !== undefined;
  t.ok(m('/legacy/(.*)\\.html$', 'example.com', '/a/legacy/x.html'));
  t.notOk(m('/legacy/(.*)\\.html$', 'example.com', '/a/legac/x.html'));
  t.ok(m('ample\\.com/leg', 'example.com', '/legacy'), 'a literal across host and URL');
  t.notOk(m('ample\\.com/leg', 'example.co', '/legacy'));
  t.ok(m('xampl', 'example.com', '/'), 'a literal inside the host');
  t.ok(m('amp', 'x.com', '/example'), 'a literal inside the URL');
  t.ok(m('^Example\\.COM/Legacy/', 'example.com', '/LEGACY/x', false), 'case-insensitive anchored');
  t.notOk(m('^Example\\.COM/Legacy/', 'example.com', '/LEGACZ/x', false));
  t.notOk(m('^example\\.co/', 'example.com', '/', false), 'the whole host must match');
  t.ok(m('LEGACY', 'example.com', '/legacy', false), 'case-insensitive unanchored regexes run as they are');
});
