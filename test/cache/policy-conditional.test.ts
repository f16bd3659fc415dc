import t from 'tap';
import {
  evaluateConditional, buildRevalidationHeaders, mergeNotModified, notModifiedMatches, isConditionalRequest,
  parseEntityTagList, selectedByNotModified,
} from '../../lib/cache/policy/index.js';

const LM = 'Sun, 06 Nov 1994 08:49:37 GMT';
const BEFORE = 'Sat, 05 Nov 1994 08:49:37 GMT';
const AFTER = 'Mon, 07 Nov 1994 08:49:37 GMT';
const stored = { status: 200, headers: { etag: '"v1"', 'last-modified': LM } };

t.test('If-None-Match with a matching tag answers 304 to GET and HEAD', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-none-match': '"v1"' }, stored), 304);
  t.equal(evaluateConditional('HEAD', { 'if-none-match': '"x", "v1"' }, stored), 304);
  t.equal(evaluateConditional('GET', { 'if-none-match': '"v2"' }, stored), 'proceed');
  t.equal(evaluateConditional('GET', { 'if-none-match': '*' }, stored), 304);
});

t.test('If-None-Match uses the weak comparison', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-none-match': 'W/"v1"' }, stored), 304);
  t.equal(evaluateConditional('GET', { 'if-none-match': '"v1"' }, { status: 200, headers: { etag: 'W/"v1"' } }), 304);
});

t.test('If-None-Match that matches answers 412 to other methods', async (t) => {
  t.equal(evaluateConditional('PUT', { 'if-none-match': '"v1"' }, stored), 412);
});

t.test('If-None-Match takes precedence over If-Modified-Since', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-none-match': '"v2"', 'if-modified-since': AFTER }, stored), 'proceed');
  t.equal(evaluateConditional('GET', { 'if-none-match': '"v1"', 'if-modified-since': BEFORE }, stored), 304);
});

t.test('If-Modified-Since answers 304 when Last-Modified is not later', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-modified-since': LM }, stored), 304);
  t.equal(evaluateConditional('GET', { 'if-modified-since': AFTER }, stored), 304);
  t.equal(evaluateConditional('GET', { 'if-modified-since': BEFORE }, stored), 'proceed');
});

t.test('If-Modified-Since is ignored when invalid, for other methods, or without Last-Modified', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-modified-since': 'garbage' }, stored), 'proceed');
  t.equal(evaluateConditional('POST', { 'if-modified-since': AFTER }, stored), 'proceed');
  t.equal(evaluateConditional('GET', { 'if-modified-since': AFTER }, { status: 200, headers: { etag: '"v1"' } }), 'proceed');
});

t.test('If-Match fails with 412 unless a stored tag matches strongly', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-match': '"v1"' }, stored), 'proceed');
  t.equal(evaluateConditional('GET', { 'if-match': '"v2"' }, stored), 412);
  t.equal(evaluateConditional('GET', { 'if-match': 'W/"v1"' }, stored), 412, 'a weak tag never matches strongly');
  t.equal(evaluateConditional('GET', { 'if-match': '*' }, stored), 'proceed');
});

t.test('If-Unmodified-Since fails with 412 when modified later, and is ignored beside If-Match', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-unmodified-since': BEFORE }, stored), 412);
  t.equal(evaluateConditional('GET', { 'if-unmodified-since': AFTER }, stored), 'proceed');
  t.equal(evaluateConditional('GET', { 'if-match': '"v1"', 'if-unmodified-since': BEFORE }, stored), 'proceed');
  t.equal(evaluateConditional('GET', { 'if-unmodified-since': 'nonsense' }, stored), 'proceed');
});

t.test('If-Match is evaluated before If-None-Match', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-match': '"v2"', 'if-none-match': '"v1"' }, stored), 412);
});

t.test('preconditions are ignored when the stored response is not 2xx', async (t) => {
  t.equal(evaluateConditional('GET', { 'if-none-match': '*' }, { status: 404, headers: { etag: '"v1"' } }), 'proceed');
});

t.test('entity-tag lists allow commas inside tags', async (t) => {
  t.same(parseEntityTagList('"a,b", W/"c"'), [{ weak: false, tag: '"a,b"' }, { weak: true, tag: '"c"' }]);
  t.equal(evaluateConditional('GET', { 'if-none-match': '"a,b"' }, { status: 200, headers: { etag: '"a,b"' } }), 304);
});

t.test('a conditional request is one with If-None-Match or If-Modified-Since', async (t) => {
  t.ok(isConditionalRequest({ 'if-none-match': '"a"' }));
  t.ok(isConditionalRequest({ 'if-modified-since': LM }));
  t.notOk(isConditionalRequest({ 'if-match': '"a"' }));
});

t.test('revalidation sends the stored ETag and Last-Modified as validators', async (t) => {
  t.same(buildRevalidationHeaders(stored.headers), { 'if-none-match': '"v1"', 'if-modified-since': LM });
  t.same(buildRevalidationHeaders({ etag: 'W/"w"' }), { 'if-none-match': 'W/"w"' });
  t.same(buildRevalidationHeaders({ 'last-modified': 'bad' }), {});
});

t.test('a 304 updates the stored headers except Content-Length and hop-by-hop fields', async (t) => {
  const merged = mergeNotModified(
    { 'content-length': '100', 'content-type': 'text/plain', 'cache-control': 'max-age=10', etag: '"v1"', date: 'old', age: '50' },
    { 'content-length': '0', 'cache-control': 'max-age=600', connection: 'close, x-hop', 'x-hop': '1', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked', 'x-new': 'yes', date: 'new' },
  );
  t.same(merged, { 'content-length': '100', 'content-type': 'text/plain', 'cache-control': 'max-age=600', etag: '"v1"', date: 'new', 'x-new': 'yes' });
});

t.test('a 304 that repeats the stored fields and Date leaves them as stored; one more field, another value or a stored Age changes them', async (t) => {
  const stored = { 'content-type': 'text/plain', 'cache-control': 'max-age=0', etag: '"v1"', date: 'd1' };
  const same = { 'cache-control': 'max-age=0', etag: '"v1"', date: 'd1', connection: 'keep-alive', 'keep-alive': 'timeout=5' };
  t.same(mergeNotModified(stored, same), stored);
  t.same(mergeNotModified(stored, { ...same, 'x-new': '1' }), { ...stored, 'x-new': '1' });
  t.same(mergeNotModified(stored, { ...same, 'cache-control': 'max-age=5' }), { ...stored, 'cache-control': 'max-age=5' });
  t.same(mergeNotModified(stored, { ...same, date: 'd2' }), { ...stored, date: 'd2' });
  t.same(mergeNotModified({ ...stored, age: '5' }, same), stored, 'the stored Age goes');
  t.same(mergeNotModified(stored, { ...same, connection: 'x-new', 'x-new': '1' }), stored, 'a field the Connection names is not stored');
});

t.test('a 304 without Age or Date drops the stored ones so the entry is not aged twice', async (t) => {
  const merged = mergeNotModified({ date: 'old', age: '50', etag: '"v1"' }, { etag: '"v1"' });
  t.same(merged, { etag: '"v1"' });
});

t.test('a 304 with a different validator does not refer to the stored response', async (t) => {
  t.ok(notModifiedMatches(stored.headers, { etag: '"v1"' }));
  t.notOk(notModifiedMatches(stored.headers, { etag: '"v2"' }));
  t.ok(notModifiedMatches(stored.headers, { 'last-modified': LM }));
  t.notOk(notModifiedMatches(stored.headers, { 'last-modified': AFTER }));
  t.ok(notModifiedMatches(stored.headers, {}));
});

t.test('a 304 selects other stored responses by an identical strong validator only (RFC 9111 4.3.4)', async (t) => {
  const date = 'Sun, 29 Nov 2026 10:00:00 GMT';
  const lm = 'Sun, 29 Nov 2026 09:00:00 GMT';
  t.equal(selectedByNotModified({ etag: '"x"' }, { etag: '"x"' }), true);
  t.equal(selectedByNotModified({ etag: '"y"' }, { etag: '"x"' }), false);
  t.equal(selectedByNotModified({ etag: 'W/"x"' }, { etag: 'W/"x"' }), false, 'a weak ETag selects only the response asked for');
  t.equal(selectedByNotModified({ 'last-modified': lm, date }, { 'last-modified': lm }), true, 'a Last-Modified a second or more before Date is strong');
  t.equal(selectedByNotModified({ 'last-modified': date, date }, { 'last-modified': date }), false, 'one equal to Date is weak');
  t.equal(selectedByNotModified({ 'last-modified': lm, date, etag: '"x"' }, { 'last-modified': lm }), false, 'the stored ETag is not confirmed by a 304 without one');
  t.equal(selectedByNotModified({ etag: '"x"' }, {}), false, 'a 304 without validators selects nothing more');
});
