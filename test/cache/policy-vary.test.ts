import t from 'tap';
import { varyHeaders, variantKey, varyNeverMatches, normaliseAcceptEncoding } from '../../lib/cache/policy/index.js';

t.test('Vary names are lower-cased, trimmed and de-duplicated across field lines', async (t) => {
  t.same(varyHeaders({ vary: 'Accept-Encoding, ACCEPT-language' }), ['accept-encoding', 'accept-language']);
  t.same(varyHeaders({ vary: ['Accept', 'accept , origin,'] }), ['accept', 'origin']);
  t.same(varyHeaders({}), []);
});

t.test('Vary: * never matches', async (t) => {
  t.same(varyHeaders({ vary: 'accept, *' }), ['*']);
  t.ok(varyNeverMatches(varyHeaders({ vary: '*' })));
  t.notOk(varyNeverMatches(['accept']));
  t.notOk(varyNeverMatches([]));
});

t.test('the browser spellings of Accept-Encoding collapse into the best supported coding', async (t) => {
  t.equal(normaliseAcceptEncoding('gzip, deflate, br'), 'br');
  t.equal(normaliseAcceptEncoding('gzip, deflate, br, zstd'), 'br');
  t.equal(normaliseAcceptEncoding('br;q=1.0, gzip;q=0.8, *;q=0.1'), 'br');
  t.equal(normaliseAcceptEncoding('gzip,deflate'), 'gzip');
  t.equal(normaliseAcceptEncoding('x-gzip'), 'gzip');
  t.equal(normaliseAcceptEncoding('deflate'), 'deflate');
  t.equal(normaliseAcceptEncoding('identity'), 'identity');
  t.equal(normaliseAcceptEncoding(undefined), 'identity');
  t.equal(normaliseAcceptEncoding(''), 'identity');
});

t.test('codings with q=0 are refused and a higher q wins over our preference', async (t) => {
  t.equal(normaliseAcceptEncoding('br;q=0, gzip'), 'gzip');
  t.equal(normaliseAcceptEncoding('gzip;q=1, br;q=0.5'), 'gzip');
  t.equal(normaliseAcceptEncoding('*'), 'br', 'a wildcard covers every coding');
  t.equal(normaliseAcceptEncoding('*;q=0.5, br;q=0'), 'gzip');
  t.equal(normaliseAcceptEncoding('gzip;q=0, deflate;q=0'), 'identity');
  t.equal(normaliseAcceptEncoding('gzip;q=abc'), 'identity', 'a malformed q drops the member');
});

t.test('the variant key normalises whitespace and combines repeated fields', async (t) => {
  const names = ['accept-language'];
  const a = variantKey(names, { 'accept-language': '  en-US ,  fr ;q=0.5 ' });
  t.equal(a, 'accept-language=en-US, fr ;q=0.5');
  t.equal(variantKey(names, { 'accept-language': ['en-US', 'fr ;q=0.5'] }), a);
  t.equal(variantKey(names, { 'accept-language': 'en-US,fr   ;q=0.5' }), a);
  t.not(variantKey(names, { 'accept-language': 'fr' }), a);
});

t.test('an absent field differs from an empty one in the variant key', async (t) => {
  t.not(variantKey(['x-a'], {}), variantKey(['x-a'], { 'x-a': '' }));
});

t.test('the variant key includes every Vary field in order and is empty without Vary', async (t) => {
  t.equal(variantKey([], { accept: 'x' }), '');
  t.equal(variantKey(['accept-encoding', 'accept'], { 'accept-encoding': 'gzip, deflate', accept: 'text/html' }), 'accept-encoding=gzip\naccept=text/html');
  t.equal(variantKey(['accept-encoding'], { 'accept-encoding': 'gzip, deflate, br' }), variantKey(['accept-encoding'], { 'accept-encoding': 'br' }));
});
