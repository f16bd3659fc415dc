// What the access log shows of a request the parser refused: the request line and fields that
// arrived (read from the raw bytes), `-` for what did not, the refusal's status and bytes.
import t from 'tap';
import { hostName, parseHead, refusedRecord, type RefusedRequest } from '../../lib/log/access/refused.js';
import { weblogALine, svcLine, SVC_FIELDS } from '../../lib/log/access/forms.js';
import { LineClock } from '../../lib/log/access/fields.js';

const answer = 'HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 5\r\nConnection: close\r\n\r\nlarge';
const refusal = (over: Partial<RefusedRequest>): RefusedRequest => ({
  connection: { clientAddress: '10.0.0.9', clientPort: 5000, serverAddress: '127.0.0.1', serverPort: 80, tls: undefined },
  status: 431, answer, head: undefined, req: undefined, at: Date.UTC(2026, 10, 29, 3, 0, 0), ...over,
});
const ctx = { xff: 'clientIp' as const, clock: new LineClock(), now: Date.UTC(2026, 10, 29, 3, 0, 0) };

t.test('the request line and the fields the forms show are read from the bytes the parser stopped in', async (t) => {
  const p = parseHead(Buffer.from('GET /a?b=1 HTTP/1.1\r\nHost: h.test:8080\r\nUser-Agent: ua/1\r\nX-Other: no\r\n\r\nbody', 'latin1'));
  t.same([p.method, p.target, p.version], ['GET', '/a?b=1', '1.1']);
  t.same(p.headers, { host: 'h.test:8080', 'user-agent': 'ua/1' });
  t.equal(hostName(p.headers), 'h.test', 'the Host without its port');
  t.equal(hostName({ host: '[::1]:80' }), '[::1]');
  const bad = parseHead(Buffer.from('GET /a  b HTTP/1.1\r\n', 'latin1'));
  t.same([bad.method, bad.target], [undefined, undefined], 'a line not of the form METHOD SP target SP version is not read');
});

t.test('the combined form shows "-" for a request line that never arrived, and the refusal\'s status and body bytes', async (t) => {
  const line = weblogALine(refusedRecord(refusal({}), undefined), ctx);
  t.equal(line, '10.0.0.9 - - [29/Nov/2026:03:00:00 +0000] "-" 431 5 "-" "-"\n');
});

t.test('the svc form shows the parsed request, the whole refusal in sc-bytes and TCP_ERROR', async (t) => {
  const rec = refusedRecord(refusal({ head: Buffer.from('GET /x HTTP/1.1\r\nHost: h.test\r\nX-Pad: ppp', 'latin1') }), undefined);
  const v = svcLine(rec, ctx).trim().split(' ');
  const f = Object.fromEntries(SVC_FIELDS.map((k, i) => [k, v[i]]));
  t.same([f['cs-method'], f['cs-uri-stem'], f['sc-status'], f['sc-bytes'], f['sc-cachehit'], f['cs-host'], f['sc-content-length']],
    ['GET', '/x', '431', String(answer.length), 'TCP_ERROR', 'h.test', '5']);
});
