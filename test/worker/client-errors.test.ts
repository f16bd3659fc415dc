import t from 'tap';
import type { ServerResponse } from 'node:http';
import { OwedAnswers, statusForParserError, versionlessRequestLine } from '../../lib/worker/client-errors.js';

const err = (code: string, raw?: string, bytesParsed?: number): Error & { code: string; rawPacket?: Buffer; bytesParsed?: number } =>
  Object.assign(new Error(code), { code, rawPacket: raw === undefined ? undefined : Buffer.from(raw), bytesParsed });

t.test('parser refusals map to the status a client expects', async (t) => {
  t.equal(statusForParserError(err('HPE_HEADER_OVERFLOW')), 431);
  t.equal(statusForParserError(err('HPE_INVALID_CONSTANT')), 400);
  t.equal(statusForParserError(err('HPE_UNEXPECTED_CONTENT_LENGTH')), 400);
  t.equal(statusForParserError(err('ERR_HTTP_REQUEST_TIMEOUT')), 408);
});

t.test('an unknown but well-formed method token is 501, a malformed one 400', async (t) => {
  t.equal(statusForParserError(err('HPE_INVALID_METHOD', 'BREW /pot HTTP/1.1\r\n')), 501);
  t.equal(statusForParserError(err('HPE_INVALID_METHOD', 'G(T / HTTP/1.1\r\n')), 400);
});

t.test('the method judged is the one on the line the parser stopped in, not the first of the chunk', async (t) => {
  // Offsets as llhttp reports them: the first byte that matched no known method.
  const post = 'POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello';
  t.equal(statusForParserError(err('HPE_INVALID_METHOD', `${post}GARBAGE\r\n\r\n`, post.length + 1)), 400, 'a line without a target after a valid POST');
  const get = 'GET /a HTTP/1.1\r\nHost: a\r\n\r\n';
  t.equal(statusForParserError(err('HPE_INVALID_METHOD', `${get}BREW /pot HTTP/1.1\r\n\r\n`, get.length + 1)), 501, 'an unknown token after a valid GET');
  t.equal(statusForParserError(err('HPE_INVALID_METHOD', `${get}G{T / HTTP/1.1\r\n\r\n`, get.length + 1)), 400);
});

t.test('a request line without an HTTP version is recognised as HTTP/0.9', async (t) => {
  t.ok(versionlessRequestLine(Buffer.from('GET /\r\n')));
  t.ok(versionlessRequestLine(Buffer.from('GET /x\n')));
  t.notOk(versionlessRequestLine(Buffer.from('GET /x HTTP/1.1\r\nHost: a\r\n')), 'a versioned line');
  t.notOk(versionlessRequestLine(Buffer.from('GET /x')), 'an unfinished line');
  t.notOk(versionlessRequestLine(Buffer.from('\r\nGET /\r\n')), 'an empty first line');
  t.notOk(versionlessRequestLine(Buffer.from('GET \r\n')), 'no target');
});

t.test('a header overflow caused by the request line is 414, by the fields 431', async (t) => {
  t.equal(statusForParserError(err('HPE_HEADER_OVERFLOW', `GET /${'u'.repeat(500)}`)), 414);
  t.equal(statusForParserError(err('HPE_HEADER_OVERFLOW', `GET http://a.com/${'u'.repeat(500)}`)), 414);
  t.equal(statusForParserError(err('HPE_HEADER_OVERFLOW', `GET /${'u'.repeat(500)} HTTP/1.1\r\nHost: a.com\r\n\r\n`)), 414, 'a whole request in the chunk, its line the bulk of it');
  t.equal(statusForParserError(err('HPE_HEADER_OVERFLOW', `GET /x HTTP/1.1\r\nX-Big: ${'a'.repeat(500)}`)), 431);
  t.equal(statusForParserError(err('HPE_HEADER_OVERFLOW', `GET /x HTTP/1.1\r\nX-Big: ${'a'.repeat(500)}\r\n\r\n`)), 431);
  t.equal(statusForParserError(err('HPE_HEADER_OVERFLOW', `aaaa bbbb ${'a'.repeat(500)}`)), 431, 'a chunk in the middle of a field value is not a request line');
});

t.test("a connection's owed answers are kept in request order as pipelined answers are added and finish", async (t) => {
  const [a, b, c] = ['a', 'b', 'c'].map((id) => ({ id }) as unknown as ServerResponse);
  const owed = new OwedAnswers();
  owed.add(a!); owed.add(b!); owed.add(c!);
  t.strictSame([...owed], [a, b, c], 'three pipelined answers, in order');
  owed.delete(b!);
  t.strictSame([...owed], [a, c], 'one in the middle finished (a client reset)');
  owed.delete(a!);
  t.strictSame([...owed], [c], 'the first finished: the next is first');
  owed.delete(a!);
  t.equal(owed.size, 1, 'an answer already gone is not taken twice');
  owed.delete(c!);
  t.equal(owed.size, 0);
  t.strictSame([...owed], []);
  owed.add(b!);
  t.strictSame([...owed], [b], 'reused after it emptied (keep-alive: one answer after another)');
});
