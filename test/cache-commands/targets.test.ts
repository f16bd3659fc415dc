import t from 'tap';
import { isBadTarget, parseTargets } from '../../lib/cache/commands/targets.js';

const hosts = new Map([['a.com', 'a.com'], ['www.a.com', 'a.com'], ['b.com', 'b.com']]);
const known = (n: string): string | undefined => hosts.get(n);

t.test('a full URL with scheme names its host and exact path', async (t) => {
  t.same(parseTargets('http://www.a.com:8080/x.jpg?v=1', known, undefined), [{ vhost: 'a.com', prefix: '/x.jpg?v=1', wildcard: false, text: 'http://www.a.com:8080/x.jpg?v=1' }]);
});

t.test('host/path and a directory ending in / are exact targets', async (t) => {
  const [a, b] = parseTargets('a.com/img/logo.png|b.com/dir/', known, undefined);
  t.match(a, { vhost: 'a.com', prefix: '/img/logo.png', wildcard: false });
  t.match(b, { vhost: 'b.com', prefix: '/dir/', wildcard: false });
});

t.test('a trailing * is the whole subtree; an inner * is a pattern under its prefix', async (t) => {
  const [sub, pat] = parseTargets('a.com/dir/*|a.com/img/*.jpg', known, undefined);
  t.match(sub, { prefix: '/dir/', wildcard: true, match: undefined });
  t.match(pat, { prefix: '/img/', wildcard: true });
  t.ok(pat!.match!.test('/img/x/y.jpg'));
  t.notOk(pat!.match!.test('/img/y.png'));
});

t.test('a target without host inherits the preceding host; none at all uses the last used host', async (t) => {
  const list = parseTargets('b.com/1|/2|3', known, undefined);
  t.same(list.map((x) => [x.vhost, x.prefix]), [['b.com', '/1'], ['b.com', '/2'], ['b.com', '/3']]);
  t.same(parseTargets('/only', known, 'a.com').map((x) => x.vhost), ['a.com']);
});

t.test('an unknown host, no host at all, or an empty url is refused', async (t) => {
  t.throws(() => parseTargets('zzz.com/x', known, undefined), { code: 'TARGET_UNKNOWN_HOST', status: 502, message: 'unknown virtual host: zzz.com' });
  t.throws(() => parseTargets('/x', known, undefined), { code: 'BAD_TARGET', status: 400 });
  t.throws(() => parseTargets('', known, 'a.com'), { code: 'BAD_TARGET', message: 'url is missing' });
  t.throws(() => parseTargets(null, known, 'a.com'), { code: 'BAD_TARGET', message: 'url is missing' });
});

t.test('a virtual host name without a dot is a host when it is known, else a path of the last host', async (t) => {
  const names = new Map([['bench', 'bench'], ['a.com', 'a.com']]);
  const byName = (n: string): string | undefined => names.get(n);
  t.match(parseTargets('bench/obj/*', byName, 'a.com'), [{ vhost: 'bench', prefix: '/obj/', wildcard: true }]);
  t.match(parseTargets('obj/*', byName, 'a.com'), [{ vhost: 'a.com', prefix: '/obj/', wildcard: true }]);
  let thrown: unknown;
  try { parseTargets('nohost:8080/x', byName, 'a.com'); } catch (err) { thrown = err; }
  t.ok(isBadTarget(thrown), 'a name with a port is taken for a host');
});
