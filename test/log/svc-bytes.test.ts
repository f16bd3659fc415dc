// The svc line written in place into a batch (svc-bytes.ts) is byte for byte the
// string form (forms.ts svcLine): spaces, non-ASCII, surrogates, absent values and odd numbers.
import t, { type Test } from 'tap';
import { svcBytes } from '../../lib/log/access/svc-bytes.js';
import { svcLine, type LineContext } from '../../lib/log/access/forms.js';
import { LineClock } from '../../lib/log/access/fields.js';
import type { TransactionRecord } from '../../lib/pipeline/parts/transaction.js';

type Over = Record<string, unknown>;

function record(over: Over = {}, headers: Record<string, string | string[]> = {}, head: string | null = null): TransactionRecord {
  return {
    loggedUrl: '/a/b.jpg?x=1', serverAddress: '127.0.0.1', method: 'GET', serverPort: 8080, clientAddress: '127.0.0.2',
    req: { headers: { host: 'a.test', 'user-agent': 'curl/8.0', ...headers } },
    res: { getHeader: () => undefined, _header: head },
    status: 200, responseHeadBytes: 150, responseBodyBytes: 1024, totalMs: 1.4, firstByteMs: 0.6, connection: { tls: undefined },
    bypass: 0, cacheResult: 'TCP_HIT', sessionId: 77, completed: true, fallback: undefined, ctxId: 'c0ffee', hookLinked: '',
    host: { logName: 'a.test' }, ...over,
  } as unknown as TransactionRecord;
}

const ctx = (xff: LineContext['xff'] = 'all'): LineContext => ({ xff, clock: new LineClock(), now: Date.UTC(2026, 10, 24, 21, 5, 9, 420) });

function same(t: Test, tx: TransactionRecord, c = ctx(), at = 5): void {
  const buf = Buffer.alloc(64 * 1024, 0x7e);
  const end = svcBytes(tx, c, buf, at);
  t.ok(end > at, 'the line fits');
  t.equal(buf.subarray(at, end).toString('hex'), Buffer.from(svcLine(tx, c)).toString('hex'), svcLine(tx, c));
  t.equal(buf.subarray(0, at).toString(), '~'.repeat(at), 'nothing before the line is touched');
}

t.test('a plain hit writes the same bytes as the string form', async (t) => {
  same(t, record());
});

t.test('spaces become + and non-ASCII values are escaped (\\xHH), as the string form writes them', async (t) => {
  const auth = `Basic ${Buffer.from('j\u00f6rg m:pw').toString('base64')}`;
  same(t, record({ loggedUrl: '/d\u00e9j\u00e0 vu/x y?q=a b&\u65e5\u672c=1', bypass: 3 }, {
    'user-agent': 'Mozilla/5.0 (X11; Linux) caf\u00e9 \ud83d\ude00 end', referer: 'http://r.example/\u00fc ber', range: 'bytes=0-1, 5-9',
    'accept-encoding': 'gzip, br', authorization: auth, 'x-forwarded-for': '10.0.0.1, 10.0.0.2', host: 'h\u00f6st.test',
  }));
});

t.test('absent and odd values are written as the string form writes them', async (t) => {
  same(t, record({ loggedUrl: '/only?', cacheResult: undefined, totalMs: -1, firstByteMs: -1, status: 0, completed: false, hookLinked: 'y',
    host: undefined, sessionId: 2 ** 40 + 3, responseBodyBytes: 0, responseHeadBytes: 0 }, { 'user-agent': '', host: '' }));
  same(t, record({ totalMs: Number.NaN, firstByteMs: 12345.5, serverPort: 0, bypass: 2, connection: { tls: 'TLS1.3' },
    fallback: { statuses: [503], hosts: ['b.test', 'c.test'], code: 0 } }, { 'user-agent': ['a b', 'c'] },
  'HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 1024\r\n\r\n'));
});

t.test('session ids past 2^32 and round numbers are written digit for digit', async (t) => {
  for (const id of [0, 9, 10, 999_999_999, 1e9, 1e9 + 7, 1_795_554_283_429_319, Number.MAX_SAFE_INTEGER]) same(t, record({ sessionId: id, responseBodyBytes: id }));
});

t.test('a lone surrogate is written as U+FFFD, as the string form is', async (t) => {
  same(t, record({}, { 'user-agent': 'bad \ud800 half', referer: '\udc00' }));
});

t.test('each xff mode writes the same client field as the string form', async (t) => {
  for (const mode of ['all', 'clientIp', 'trimClientIp'] as const) same(t, record({}, { 'x-forwarded-for': '10.0.0.1 , 10.0.0.2' }), ctx(mode));
});

t.test('a line longer than the room left says so and writes nothing the caller keeps', async (t) => {
  const tx = record({}, { 'user-agent': 'u'.repeat(500) });
  const buf = Buffer.alloc(300, 0x7e);
  t.equal(svcBytes(tx, ctx(), buf, 10), -1);
  const fits = Buffer.alloc(4096);
  t.ok(svcBytes(tx, ctx(), fits, 0) > 500, 'the same line fits a larger room');
});

t.test('consecutive session ids, across a new digit and back, are written as the string form writes them', async (t) => {
  for (const id of [98, 99, 100, 101, 9_999_999_999_999_999 - 1, 7, 8, 999_999_999_999_998, 999_999_999_999_999, 1e15, 1e15 + 1, 5]) {
    same(t, record({ sessionId: id }));
  }
});

t.test('Content-Length and Content-Encoding are read from the sent head in any case, spacing and order', async (t) => {
  // sc-resinfo is field 15 of the line, sc-content-length field 20 (document 3's order).
  for (const [head, resinfo, length] of [
    ['HTTP/1.1 200 OK\r\ncontent-length: 12\r\ncontent-encoding: deflate\r\n\r\n', 'deflate', '12'],
    ['HTTP/1.1 200 OK\r\nCONTENT-ENCODING:\tgzip\r\nContent-Type: text/plain\r\nCONTENT-LENGTH:   7\r\n\r\n', 'gzip', '7'],
    ['HTTP/1.1 200 OK\r\nContent-Type: a\r\nContent-Location: /x\r\nContent-Lengthy: 3\r\nContent-Length: 5\r\n\r\n', '-', '5'],
    ['HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Encoding: gzip\r\n\r\n', '-', '-'],
    ['HTTP/1.1 204 No Content\r\n\r\n', '-', '-'],
  ] as const) {
    const tx = record({}, {}, head);
    same(t, tx);
    const fields = svcLine(tx, ctx()).trimEnd().split(' ');
    t.equal(fields[14], resinfo, `sc-resinfo of ${JSON.stringify(head)}`);
    t.equal(fields[19], length, `sc-content-length of ${JSON.stringify(head)}`);
  }
});

t.test('Content-Length and Content-Encoding are read from the fields given to writeHead, as a list or an object, in any case', async (t) => {
  for (const [fields, resinfo, length] of [
    [['content-type', 'a', 'content-length', '12', 'content-encoding', 'gzip', 'age', '3'], 'gzip', '12'],
    [['Content-Length', 7, 'Content-Encoding', ['deflate']], 'deflate', '7'],
    [{ 'content-length': '5', 'x-cache': 'TCP_HIT' }, '-', '5'],
    [{ 'Content-Encoding': 'gzip', 'CONTENT-LENGTH': 9 }, 'gzip', '9'],
    [{ 'content-encoding': 'br' }, 'br', '-'],
    [{ 'content-encoding': 'zstd' }, 'zstd', '-'],
    [{ 'content-encoding': 'compress' }, '-', '-'],
    [[], '-', '-'],
  ] as const) {
    // The serialized head says otherwise: the fields given to writeHead are what is read.
    const tx = record({ responseFields: fields }, {}, 'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-encoding: gzip\r\n\r\n');
    same(t, tx);
    const line = svcLine(tx, ctx()).trimEnd().split(' ');
    t.equal(line[14], resinfo, `sc-resinfo of ${JSON.stringify(fields)}`);
    t.equal(line[19], length, `sc-content-length of ${JSON.stringify(fields)}`);
  }
});
