// The cache key function of cachingKey and the invalidation targets made from client URLs.
import t from 'tap';
import { compileKeyRule, keyTargets, postKeyUrl, type CachingKeySetting } from '../../lib/cache/key.js';
import { parseTargets } from '../../lib/cache/commands/targets.js';

const base: CachingKeySetting = {
  caseSensitive: true, queryString: { enable: true, sort: false, ignore: [], keep: [] }, headers: [],
  postMethod: { enable: false, bodySensitive: false, bodyContentLengthMax: 102400 },
};
const rule = (over: Partial<CachingKeySetting> & { q?: Partial<CachingKeySetting['queryString']> }) =>
  compileKeyRule({ ...base, ...over, queryString: { ...base.queryString, ...over.q } });

t.test('the default key is the URL itself: no rule is built', async (t) => {
  t.equal(compileKeyRule(base), undefined);
});

t.test('sorting orders parameters by name and keeps repeated ones in their order', async (t) => {
  const k = rule({ q: { sort: true } })!;
  t.equal(k.url('/a?b=2&a=1&b=1'), '/a?a=1&b=2&b=1');
  t.equal(k.url('/a'), '/a');
  t.equal(k.url('/a?'), '/a');
});

t.test('ignore drops named parameters (decoded names), keep keeps only the named ones', async (t) => {
  t.equal(rule({ q: { ignore: ['utm source'] } })!.url('/p?x=1&utm%20source=m&utm+source=n'), '/p?x=1');
  t.equal(rule({ q: { keep: ['id'] } })!.url('/p?s=1&id=7&t'), '/p?id=7');
  t.equal(rule({ q: { enable: false } })!.url('/p?s=1'), '/p');
});

t.test('a case-insensitive key folds path, query and the parameter names it compares', async (t) => {
  const k = rule({ caseSensitive: false, q: { ignore: ['SID'] } })!;
  t.equal(k.url('/A/B?Sid=1&X=Y'), '/a/b?x=y');
  t.ok(k.folded);
});

t.test('header names of the key are lower-cased; a POST key carries the body hash only when it counts', async (t) => {
  t.strictSame(rule({ headers: ['X-Device'] })!.headers, ['x-device']);
  t.equal(postKeyUrl('/api', undefined), '/api\u0001POST');
  t.match(postKeyUrl('/api', Buffer.from('a')), /^\/api\u0001POST:[\w-]{43}$/);
  t.not(postKeyUrl('/api', Buffer.from('a')), postKeyUrl('/api', Buffer.from('b')));
});

t.test('invalidation targets become keys: exact URLs through the rule, POST answers under them, patterns folded', async (t) => {
  const k = rule({ caseSensitive: false, q: { sort: true } })!;
  const targets = parseTargets('h/P?b=1&a=2|h/Dir/*|h/x/*.JPG', () => 'h', 'h');
  const out = keyTargets(targets, () => ({ rule: k, post: true }));
  t.strictSame(out.map((o) => [o.prefix, o.wildcard]), [['/p?a=2&b=1', false], ['/p?a=2&b=1\u0001POST', true], ['/dir/', true], ['/x/', true]]);
  t.ok(out[3]!.match!.test('/x/a.jpg'), 'a pattern matches the folded keys');
  t.strictSame(keyTargets(targets, () => ({ rule: undefined, post: false })).map((o) => o.prefix), ['/P?b=1&a=2', '/Dir/', '/x/']);
});
