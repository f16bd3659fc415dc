import t from 'tap';
import { varyHeaders, variantKey, varyNeverMatches, normaliseAcceptEncoding, encodingAcceptable, needsEncodingCheck } from '../../lib/cache/policy/index.js';

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

t.test('the browser spellings of Accept-Encoding collapse into the set of known codings they accept', async (t) => {
  t.equal(normaliseAcceptEncoding('gzip, deflate, br'), 'br,gzip,deflate');
  t.equal(normaliseAcceptEncoding('br, gzip, deflate'), 'br,gzip,deflate', 'order of the request does not matter');
  t.equal(normaliseAcceptEncoding('gzip, deflate, br, zstd'), 'br,zstd,gzip,deflate', 'zstd is known');
  t.equal(normaliseAcceptEncoding('br;q=1.0, gzip;q=0.8, *;q=0.1'), 'br,zstd,gzip,deflate', 'the wildcard accepts the rest');
  t.equal(normaliseAcceptEncoding('gzip,deflate'), 'gzip,deflate');
  t.equal(normaliseAcceptEncoding('x-gzip'), 'gzip');
  t.equal(normaliseAcceptEncoding('identity'), 'identity');
  t.equal(normaliseAcceptEncoding(undefined), 'identity');
  t.equal(normaliseAcceptEncoding(''), 'identity');
});

t.test('codings with q=0 are refused', async (t) => {
  t.equal(normaliseAcceptEncoding('br;q=0, gzip'), 'gzip');
  t.equal(normaliseAcceptEncoding('*;q=0.5, br;q=0'), 'zstd,gzip,deflate');
  t.equal(normaliseAcceptEncoding('gzip;q=0, deflate;q=0'), 'identity');
  t.equal(normaliseAcceptEncoding('gzip;q=abc'), 'identity', 'a malformed q drops the member');
});

t.test('a stored Content-Encoding the client does not accept is not acceptable', async (t) => {
  t.ok(encodingAcceptable('gzip', undefined), 'no coding always fits');
  t.ok(encodingAcceptable(undefined, 'identity'));
  t.notOk(encodingAcceptable(undefined, 'gzip'));
  t.notOk(encodingAcceptable('gzip, deflate, br', 'zstd'), 'Safari does not get zstd');
  t.ok(encodingAcceptable('gzip, deflate, br, zstd', 'zstd'));
  t.ok(encodingAcceptable('*', 'compress'));
  t.notOk(encodingAcceptable('*, compress;q=0', 'compress'));
  t.notOk(encodingAcceptable('gzip', 'gzip, compress'), 'every stacked coding must be accepted');
  t.ok(encodingAcceptable('x-gzip', 'gzip'));
});

t.test('only codings outside the variant key need the acceptability check', async (t) => {
  t.notOk(needsEncodingCheck(undefined));
  t.notOk(needsEncodingCheck('zstd'));
  t.notOk(needsEncodingCheck('GZIP'));
  t.ok(needsEncodingCheck('compress'));
  t.ok(needsEncodingCheck(['gzip', 'br']));
});

t.test('the variant key normalises whitespace and combines repeated fields', async (t) => {
  const names = ['accept-language'];
  const a = variantKey(names, { 'accept-language': '  en-US ,  fr ;q=0.5 ' });
  t.equal(a, 'accept-language=en-us,fr;q=0.5');
  t.equal(variantKey(names, { 'accept-language': ['en-US', 'fr ;q=0.5'] }), a);
  t.equal(variantKey(names, { 'accept-language': 'en-US,fr   ;q=0.5' }), a);
  t.not(variantKey(names, { 'accept-language': 'fr' }), a);
});

t.test('Accept-Language, Accept-Charset and Accept compare as weighted lists: case, spaces, weight spelling and order of weights do not matter', async (t) => {
  const lang = (v: string | string[]): string => variantKey(['accept-language'], { 'accept-language': v });
  const a = lang('en-US,en;q=0.9,fr;q=0.8');
  for (const same of ['EN-us, en;q=0.90, FR;Q=0.800', 'fr;q=0.8, en;q=0.9, en-US', 'en-US;q=1.0,en;q=0.9,fr;q=0.8,fr;q=0.8', ['en-US', 'en;q=0.9', 'fr;q=0.8'], 'en-US,,en;q=0.9, ,fr;q=0.8']) {
    t.equal(lang(same), a, `${JSON.stringify(same)} selects the same variant`);
  }
  t.not(lang('en-US,fr;q=0.9,en;q=0.8'), a, 'other weights are another request');
  t.not(lang('da, en'), lang('en, da'), 'equal weights keep their order: origins break ties by it');
  t.not(lang('en-US,en;q=0.9'), a, 'a member less is another request');
  t.equal(variantKey(['accept-charset'], { 'accept-charset': 'UTF-8, ISO-8859-1;q=0.5' }), variantKey(['accept-charset'], { 'accept-charset': 'iso-8859-1;q=0.5,utf-8' }));
  const accept = (v: string): string => variantKey(['accept'], { accept: v });
  t.equal(accept('Text/HTML, application/JSON;q=0.5'), accept('application/json;q=0.5,text/html'));
  t.equal(accept('text/html;Level=1'), accept('text/html; level=1'), 'parameter names are case-insensitive');
  t.not(accept('text/html;level=A'), accept('text/html;level=a'), 'parameter values may be case-sensitive: kept');
});

t.test('a weighted list that does not parse keys a variant of its own, only trimmed', async (t) => {
  const lang = (v: string): string => variantKey(['accept-language'], { 'accept-language': v });
  t.equal(lang(' en;q=2 '), 'accept-language=en;q=2', 'an out-of-range weight');
  t.not(lang('en;q=abc'), lang('en'));
  t.not(lang('en;q=abc'), lang('EN;q=abc'), 'not lower-cased either');
  t.equal(variantKey(['accept'], { accept: 'text/plain;x="a,b"' }), 'accept=text/plain;x="a, b"', 'a quoted string');
});

t.test('an absent field differs from an empty one in the variant key', async (t) => {
  t.not(variantKey(['x-a'], {}), variantKey(['x-a'], { 'x-a': '' }));
});

t.test('the variant key includes every Vary field in order and is empty without Vary', async (t) => {
  t.equal(variantKey([], { accept: 'x' }), '');
  t.equal(variantKey(['accept-encoding', 'accept'], { 'accept-encoding': 'gzip, deflate', accept: 'text/html' }), 'accept-encoding=gzip,deflate\naccept=text/html');
  t.equal(variantKey(['accept-encoding'], { 'accept-encoding': 'gzip, deflate, br' }), variantKey(['accept-encoding'], { 'accept-encoding': 'br,gzip;q=0.5,deflate' }));
});
