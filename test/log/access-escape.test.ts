// Access-log values are escaped the way nginx escapes them, in every form: bytes below 0x20, DEL
// and non-ASCII bytes as \xHH, `"` and `\` after a backslash. node gives header values as latin1
// (one character per byte received), so the UTF-8 `café` a client sends arrives as `cafÃ©` and
// must be written `caf\xC3\xA9`, not UTF-8-encoded a second time.
import t from 'tap';
import { svcBytes } from '../../lib/log/access/svc-bytes.js';
import { svcLine, weblogALine, weblogBLine, type LineContext } from '../../lib/log/access/forms.js';
import { compileFormat } from '../../lib/log/access/custom-format.js';
import { escapeLog, LineClock } from '../../lib/log/access/fields.js';
import type { TransactionRecord } from '../../lib/pipeline/parts/transaction.js';

/** The UTF-8 bytes of `s` as node's parser hands them over (latin1). */
const wire = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');

const ua = wire('café "quoted" back\\slash\ttab\x7f');
const UA_ESCAPED = 'caf\\xC3\\xA9 \\"quoted\\" back\\\\slash\\x09tab\\x7F';

function record(): TransactionRecord {
  return {
    loggedUrl: wire('/dé?q=ü'), urlReceived: wire('/dé?q=ü'), serverAddress: '127.0.0.1', method: 'GET', serverPort: 8080, clientAddress: '127.0.0.2',
    httpVersion: '1.1', req: { headers: { host: 'a.test', 'user-agent': ua, referer: wire('http://r.example/ü') } },
    res: { getHeader: () => undefined, _header: null }, status: 200, responseHeadBytes: 100, responseBodyBytes: 5, requestHeadBytes: 80,
    requestBodyBytes: 0, totalMs: 1, firstByteMs: 1, connection: { tls: undefined }, bypass: 0, cacheResult: 'TCP_MISS', sessionId: 1,
    completed: true, fallback: undefined, ctxId: 'c0ffee', hookLinked: '', host: { logName: 'a.test' }, protocol: 'http',
  } as unknown as TransactionRecord;
}
const ctx = (): LineContext => ({ xff: 'clientIp', clock: new LineClock(), now: Date.UTC(2026, 10, 29, 3, 0, 0) });

t.test('escapeLog writes control, DEL and non-ASCII bytes as \\xHH and puts a backslash before " and \\', async (t) => {
  t.equal(escapeLog(ua), UA_ESCAPED);
  t.equal(escapeLog('plain ascii/1.0 (x; y)'), 'plain ascii/1.0 (x; y)', 'a safe value is kept as is');
  t.equal(escapeLog('\u65e5'), '\\xE6\\x97\\xA5', 'a character beyond 0xFF (a rewritten URL) as its UTF-8 bytes');
  t.equal(escapeLog('\ud83d\ude00'), '\\xF0\\x9F\\x98\\x80', 'a surrogate pair as one code point');
});

t.test('the svc form escapes, then writes spaces as +, the same in the string and the in-place writer', async (t) => {
  const line = svcLine(record(), ctx());
  t.match(line, ` /d\\xC3\\xA9 q=\\xC3\\xBC `);
  t.match(line, ` ${UA_ESCAPED.replace(/ /g, '+')} `);
  t.match(line, ' http://r.example/\\xC3\\xBC ');
  t.notMatch(line, /[^\x20-\x7e\n]/, 'the line is printable ASCII');
  const buf = Buffer.alloc(4096);
  const end = svcBytes(record(), ctx(), buf, 0);
  t.equal(buf.subarray(0, end).toString('latin1'), line, 'svcBytes writes the same bytes');
});

t.test('the combined form (weblogA) escapes inside its quoted fields and its request line', async (t) => {
  const line = weblogALine(record(), ctx());
  t.match(line, `"GET /d\\xC3\\xA9?q=\\xC3\\xBC HTTP/1.1" 200 5 "http://r.example/\\xC3\\xBC" "${UA_ESCAPED}"\n`);
});

t.test('the IIS form (weblogB) escapes like the svc form', async (t) => {
  const line = weblogBLine(record(), ctx());
  t.match(line, ` ${UA_ESCAPED.replace(/ /g, '+')} http://r.example/\\xC3\\xBC 200 `);
});

t.test('a custom format escapes every value but keeps its own text', async (t) => {
  const line = compileFormat('"%{user-agent}i" [%U] "%r"')(record(), ctx());
  t.equal(line, `"${UA_ESCAPED}" [/d\\xC3\\xA9] "GET /d\\xC3\\xA9?q=\\xC3\\xBC HTTP/1.1"\n`);
});

t.test('a value whose escaped form outgrows the room left makes the in-place writer give up, not cut the line', async (t) => {
  // Units beyond 0xFF are not expected in request fields; when one is there anyway the line is
  // refused (-1: the caller writes it through the string path), never truncated.
  const tx = { ...record(), req: { headers: { host: 'a.test', 'user-agent': '\u65e5'.repeat(400) } } } as unknown as TransactionRecord;
  const buf = Buffer.alloc(2400);
  t.equal(svcBytes(tx, ctx(), buf, 0), -1);
});
