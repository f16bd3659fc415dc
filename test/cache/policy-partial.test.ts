// Partial content rules (lib/cache/policy/partial.ts): the span a 206 is, the validator spans
// combine under, and how a requested range is cut into stored stretches and aligned pieces.
import t from 'tap';
import { parseContentRange, pieceAt, planSegments, spanBase, spanValidator, spanVariantKey } from '../../lib/cache/policy/partial.js';

t.test('Content-Range of one part gives the span; * and impossible ranges give none', async (t) => {
  t.same(parseContentRange('bytes 10-19/100'), { start: 10, end: 19, total: 100 });
  t.same(parseContentRange('BYTES 0-0/1'), { start: 0, end: 0, total: 1 });
  t.equal(parseContentRange('bytes */100'), undefined);
  t.equal(parseContentRange('bytes 20-10/100'), undefined);
  t.equal(parseContentRange('bytes 0-100/100'), undefined, 'the last byte is beyond the length');
  t.equal(parseContentRange('items 0-1/2'), undefined);
  t.equal(parseContentRange(undefined), undefined);
});

t.test('spans combine under a strong ETag, else Last-Modified; a weak ETag ties nothing', async (t) => {
  t.equal(spanValidator({ etag: '"a"', 'last-modified': 'Tue, 01 Jan 2030 00:00:00 GMT' }), 'e"a"');
  t.equal(spanValidator({ 'last-modified': 'Tue, 01 Jan 2030 00:00:00 GMT' }), 'lTue, 01 Jan 2030 00:00:00 GMT');
  t.equal(spanValidator({ etag: 'W/"a"', 'last-modified': 'Tue, 01 Jan 2030 00:00:00 GMT' }), undefined);
  t.equal(spanValidator({}), undefined);
});

t.test('a span variant key keeps its base and is never a request variant key', async (t) => {
  const k = spanVariantKey(4096, 'gzip');
  t.equal(spanBase(k), 'gzip');
  t.equal(spanBase(spanVariantKey(0, '')), '');
  t.equal(spanBase('gzip'), undefined);
});

t.test('a range is cut into stored stretches and gaps that end at piece boundaries', async (t) => {
  const spans = [{ start: 100, end: 199, total: 1000 }, { start: 150, end: 349, total: 1000 }];
  t.same(planSegments(spans, 120, 400, 64), [
    { start: 120, end: 199, span: 0 },
    { start: 200, end: 349, span: 1 },
    { start: 350, end: 383, span: -1 },
    { start: 384, end: 400, span: -1 },
  ]);
  t.same(planSegments(spans, 0, 110, 64), [
    { start: 0, end: 63, span: -1 },
    { start: 64, end: 99, span: -1 },
    { start: 100, end: 110, span: 0 },
  ], 'a gap stops where a stored span starts');
  t.same(planSegments([], 5, 5, 64), [{ start: 5, end: 5, span: -1 }]);
});

t.test('the piece of a byte is aligned to partSize and cut at the end of the object', async (t) => {
  t.same(pieceAt(3000000000, 2 ** 32, 4194304), { start: 2998927360, end: 3003121663 });
  t.same(pieceAt(990, 1000, 64), { start: 960, end: 999 });
});
