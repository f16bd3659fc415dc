import t from 'tap';
import {
  parseRange, evaluateRange, ifRangeApplies, multipartBoundary, multipartParts, multipartTrailer, multipartLength,
  multipartContentType, MAX_RANGES,
} from '../../lib/cache/policy/index.js';

const LM = 'Sun, 06 Nov 1994 08:49:37 GMT';
const LATER = 'Sun, 06 Nov 1994 10:00:00 GMT';

t.test('a single range yields start and end with its Content-Range', async (t) => {
  t.same(parseRange('bytes=0-99', 1000), { type: 'single', range: { start: 0, end: 99 }, contentRange: 'bytes 0-99/1000' });
  t.same(parseRange('bytes=900-', 1000), { type: 'single', range: { start: 900, end: 999 }, contentRange: 'bytes 900-999/1000' });
  t.same(parseRange('bytes=-100', 1000), { type: 'single', range: { start: 900, end: 999 }, contentRange: 'bytes 900-999/1000' });
});

t.test('a last position beyond the end is clipped to the length', async (t) => {
  t.match(parseRange('bytes=500-5000', 1000), { type: 'single', range: { start: 500, end: 999 } });
  t.match(parseRange('bytes=-5000', 1000), { type: 'single', range: { start: 0, end: 999 } });
});

t.test('a multi-range request yields every satisfiable range', async (t) => {
  t.same(parseRange('bytes=0-9, 20-29,5000-6000, -5', 100), { type: 'multi', ranges: [{ start: 0, end: 9 }, { start: 20, end: 29 }, { start: 95, end: 99 }] });
});

t.test('overlapping and adjacent ranges are coalesced', async (t) => {
  t.same(parseRange('bytes=0-9,5-19,20-29', 100), { type: 'single', range: { start: 0, end: 29 }, contentRange: 'bytes 0-29/100' });
  t.same(parseRange('bytes=50-59,0-9,8-12', 100), { type: 'multi', ranges: [{ start: 0, end: 12 }, { start: 50, end: 59 }] });
});

t.test('more than 16 ranges are ignored as abuse and the whole body is served', async (t) => {
  const many = 'bytes=' + Array.from({ length: MAX_RANGES + 1 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',');
  t.equal(MAX_RANGES, 16);
  t.same(parseRange(many, 10000), { type: 'none' });
  const ok = 'bytes=' + Array.from({ length: MAX_RANGES }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',');
  t.equal(parseRange(ok, 10000).type, 'multi');
});

t.test('an unsatisfiable range answers 416 with Content-Range bytes */length', async (t) => {
  t.same(parseRange('bytes=1000-', 1000), { type: 'unsatisfiable', status: 416, contentRange: 'bytes */1000' });
  t.same(parseRange('bytes=-0', 1000), { type: 'unsatisfiable', status: 416, contentRange: 'bytes */1000' });
  t.same(parseRange('bytes=2000-3000,5000-', 1000), { type: 'unsatisfiable', status: 416, contentRange: 'bytes */1000' });
  t.equal(parseRange('bytes=0-', 0).type, 'unsatisfiable');
});

t.test('an invalid Range is ignored and the whole body is served', async (t) => {
  for (const v of ['bytes=abc', 'bytes=10-5', 'bytes=5', 'items=0-5', 'bytes=-', 'bytes=0-5,x-9', 'bytes=', '0-5', 'bytes=1.5-2'])
    t.same(parseRange(v, 1000), { type: 'none' }, v);
  t.same(parseRange(undefined, 1000), { type: 'none' });
});

t.test('the range unit is case-insensitive', async (t) => {
  t.equal(parseRange('Bytes=0-1', 10).type, 'single');
});

t.test('If-Range with a weak ETag never applies the range', async (t) => {
  t.notOk(ifRangeApplies('W/"v1"', { etag: 'W/"v1"' }));
  t.notOk(ifRangeApplies('"v1"', { etag: 'W/"v1"' }), 'nor with a weak stored ETag');
});

t.test('If-Range with a strong ETag applies the range only when it matches', async (t) => {
  t.ok(ifRangeApplies('"v1"', { etag: '"v1"' }));
  t.notOk(ifRangeApplies('"v2"', { etag: '"v1"' }));
  t.notOk(ifRangeApplies('"v1"', {}));
  t.ok(ifRangeApplies(undefined, {}));
});

t.test('If-Range with a date applies only when it equals a strong Last-Modified', async (t) => {
  t.ok(ifRangeApplies(LM, { 'last-modified': LM, date: LATER }));
  t.notOk(ifRangeApplies(LATER, { 'last-modified': LM, date: LATER }), 'a different date');
  t.notOk(ifRangeApplies(LM, { 'last-modified': LM, date: LM }), 'Last-Modified equal to Date is weak');
  t.notOk(ifRangeApplies(LM, { 'last-modified': LM }), 'without Date the Last-Modified is not known to be strong');
  t.notOk(ifRangeApplies('garbage', { 'last-modified': LM, date: LATER }));
});

t.test('Range applies only to GET of a stored 200 when If-Range matches', async (t) => {
  const stored = { status: 200, headers: { etag: '"v1"' } };
  t.equal(evaluateRange('GET', { range: 'bytes=0-1' }, stored, 10).type, 'single');
  t.equal(evaluateRange('HEAD', { range: 'bytes=0-1' }, stored, 10).type, 'none');
  t.equal(evaluateRange('GET', { range: 'bytes=0-1' }, { status: 404, headers: {} }, 10).type, 'none');
  t.equal(evaluateRange('GET', { range: 'bytes=0-1', 'if-range': '"v0"' }, stored, 10).type, 'none');
  t.equal(evaluateRange('GET', { range: 'bytes=0-1', 'if-range': '"v1"' }, stored, 10).type, 'single');
});

t.test('multipart/byteranges parts carry the type, the Content-Range and the boundary', async (t) => {
  const b = multipartBoundary();
  t.match(b, /^[0-9a-f]{24}$/);
  t.not(multipartBoundary(), b, 'boundaries differ');
  t.equal(multipartContentType('B'), 'multipart/byteranges; boundary=B');
  const parts = [...multipartParts([{ start: 0, end: 1 }, { start: 5, end: 9 }], 10, 'text/plain', 'B')];
  t.same(parts, [
    { start: 0, end: 1, head: '--B\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/10\r\n\r\n' },
    { start: 5, end: 9, head: '\r\n--B\r\nContent-Type: text/plain\r\nContent-Range: bytes 5-9/10\r\n\r\n' },
  ]);
  t.equal(multipartTrailer('B'), '\r\n--B--\r\n');
});

t.test('the multipart Content-Length is the exact length of the body written', async (t) => {
  const ranges = [{ start: 0, end: 1 }, { start: 5, end: 9 }];
  const data = Buffer.from('0123456789');
  let body = '';
  for (const p of multipartParts(ranges, 10, undefined, 'B')) body += p.head + data.subarray(p.start, p.end + 1).toString();
  body += multipartTrailer('B');
  t.equal(multipartLength(ranges, 10, undefined, 'B'), Buffer.byteLength(body));
  t.notMatch(body, /Content-Type/, 'no Content-Type line without a type');
});
