// RFC 9213 2.1: CDN-Cache-Control is an RFC 8941 Dictionary; an invalid field is ignored whole
// and Cache-Control applies.
import t from 'tap';
import { responseDirectives } from '../../lib/cache/policy/index.js';
import { parseCdnCacheControl } from '../../lib/cache/policy/cdn-cache-control.js';

const withCc = (cdn: string | string[]) => responseDirectives({ 'cache-control': 'max-age=5, must-revalidate', 'cdn-cache-control': cdn });

t.test('parameters of a member are ignored: max-age=60;x=1 is max-age 60', async (t) => {
  const d = withCc('max-age=60;x=1');
  t.equal(d.maxAge, 60);
  t.equal(d.targeted, true);
  t.equal(d.mustRevalidate, false, 'Cache-Control is not used');
});

t.test('an upper-case key makes the whole field invalid and Cache-Control applies', async (t) => {
  const d = withCc('Max-Age=60');
  t.equal(d.targeted, false);
  t.equal(d.maxAge, 5);
  t.equal(d.mustRevalidate, true);
});

t.test('a duplicated key: the last one wins', async (t) => {
  t.equal(withCc('max-age=60, max-age=10').maxAge, 10);
  t.equal(withCc(['max-age=60', 'max-age=30']).maxAge, 30, 'field lines are combined');
});

t.test('no-store=?0 is not no-store, no-store and no-store=?1 are', async (t) => {
  t.equal(withCc('no-store=?0, max-age=60').noStore, false);
  t.equal(withCc('no-store').noStore, true);
  t.equal(withCc('no-store=?1').noStore, true);
});

t.test('a value of the wrong type is ignored, the rest of the field applies', async (t) => {
  const d = withCc('max-age="60", public');
  t.equal(d.targeted, true);
  t.equal(d.maxAge, undefined);
  t.equal(d.public, true);
  t.equal(withCc('max-age=1.5').maxAge, undefined, 'a decimal is not delta-seconds');
  t.equal(withCc('max-age=-1').maxAge, undefined);
  t.equal(withCc('no-store=1').noStore, false, 'an integer is not a boolean');
});

t.test('syntax errors make the field invalid', async (t) => {
  for (const bad of ['max-age=60,', 'max-age=60 x', 'max-age=', 'max-age="60', '1max=2', 'max-age=60;;', 'a=(1 2']) {
    t.equal(parseCdnCacheControl(bad), undefined, bad);
    t.equal(withCc(bad).maxAge, 5, `${bad}: Cache-Control applies`);
  }
  t.equal(withCc('').targeted, false, 'empty: absent');
  t.equal(withCc('   ').targeted, false);
});

t.test('the other directives and their forms', async (t) => {
  const d = withCc('s-maxage=30, stale-while-revalidate=10, stale-if-error=20, must-revalidate, private="set-cookie", no-cache=("x-a" "x-b"), x-ext=:aGk=:, y=tok, z=1.25');
  t.equal(d.sMaxage, 30);
  t.equal(d.staleWhileRevalidate, 10);
  t.equal(d.staleIfError, 20);
  t.equal(d.mustRevalidate, true);
  t.same(d.private, ['set-cookie']);
  t.same(d.noCache, ['x-a', 'x-b']);
  t.equal(withCc('max-age=99999999999').maxAge, 2147483648, 'capped like delta-seconds');
});
