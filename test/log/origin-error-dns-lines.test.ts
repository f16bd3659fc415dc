// Lines formatted in the worker for the global originError log and the per-host dns log, and the
// monitoring record the primary writes, from the records they are made of.
import t from 'tap';
import { OriginTrace, type OriginNote } from '../../lib/origin/index.js';
import { originErrorLine } from '../../lib/log/global/origin-error-line.js';
import { dnsLine } from '../../lib/log/dns-line.js';
import { monitoringRecord } from '../../lib/primary/timed-logs.js';

const AT = Date.UTC(2026, 10, 24, 9, 58, 30);

function trace(o: Partial<OriginTrace> & { range?: string; headers?: string[] }): OriginTrace {
  const tr = new OriginTrace();
  const note: OriginNote = {
    vhost: 'a.com', method: 'GET', url: '/f?x=1', range: o.range, acceptEncoding: undefined, sessionId: 7, ctxId: 'ctx-1',
    bypass: '-', sessionType: 'cache', balance: '-',
  };
  Object.assign(tr, { address: '127.0.0.1:8080', domain: 'origin.test', status: 200, ...o, note });
  // The head as undici parses it: lower-case names (the trace keeps that, not the raw list).
  if (o.headers !== undefined) {
    const head: Record<string, string> = {};
    for (let i = 0; i + 1 < o.headers.length; i += 2) head[o.headers[i]!.toLowerCase()] = o.headers[i + 1]!;
    tr.responseHeaders = head;
  }
  return tr;
}

const kind = (tr: OriginTrace, warning = true): string | undefined => originErrorLine(tr, warning, AT)?.split(' ')[2];

t.test('a failed exchange is written under its sc-sock-error, warnings or not', async (t) => {
  const line = originErrorLine(trace({ sockError: 'Connect-Timeout', status: 0 }), false, AT);
  t.equal(line, '2026-11-24 09:58:30 Connect-Timeout a.com origin.test 127.0.0.1 GET /f?x=1 - 0 - ctx-1\n');
  t.equal(kind(trace({ sockError: 'Non-Existent-Domain', status: 0, address: '' }), false), 'Non-Existent-Domain');
  t.equal(kind(trace({ sockError: 'Client-Close' })), undefined, 'the client leaving is not an origin error');
  t.equal(kind(trace({}), false), undefined, 'a good exchange writes nothing');
});

t.test('with warning, each wrong HTTP exchange of document 3 is written with its kind', async (t) => {
  t.equal(kind(trace({ status: 206, headers: ['Content-Range', 'bytes 0-9/100', 'Content-Length', '10'] })), 'PartialResponseOnNormalRequest');
  t.equal(kind(trace({ range: 'bytes=0-9', status: 200 })), 'NotPartialResponseOnRangeRequest');
  t.equal(kind(trace({ range: 'bytes=0-9', status: 206, headers: ['Content-Range', 'bytes 0-9/100', 'Content-Length', '12'] })), 'DifferentContentLengthOnRangeRequest');
  t.equal(kind(trace({ range: 'bytes=0-9', status: 206, headers: ['content-range', 'bytes 0-9/100', 'content-length', '10'] })), undefined, 'a right 206');
  t.equal(kind(trace({ range: 'bytes=500-', status: 416 })), undefined, 'an unsatisfiable range is a right answer');
  const closed = trace({ status: 0, sockError: 'Server-Close' });
  t.equal(kind(closed, false), 'Server-Close');
  t.equal(originErrorLine(closed, true, AT)?.split(' ')[2], 'Server-Close', 'a failure is written once, under its sc-sock-error');
  t.equal(kind(trace({ range: 'bytes=0-9', status: 200 }), false), undefined, 'warnings off: not written');
});

t.test('a dns line has the domain, TTL, the IPs, their count, the time and the result', async (t) => {
  t.equal(dnsLine({ domain: 'origin.test', ttl: 300, ips: ['10.0.0.1', '10.0.0.2'], timeTakenMs: 3.4, success: true, at: AT }),
    '2026-11-24 09:58:30 origin.test 300 10.0.0.1,10.0.0.2 2 3 success\n');
  t.equal(dnsLine({ domain: 'nx.test', ttl: 0, ips: [], timeTakenMs: 12, success: false, at: AT, error: 'ENOTFOUND' }),
    '2026-11-24 09:58:30 nx.test 0 - 0 12 fail\n');
});

t.test('a monitoring record is one JSON line or one XML element, stamped', async (t) => {
  const vh = { Name: 'a.com', Uptime: 300, Requests: 12 };
  t.equal(monitoringRecord(vh, 'json', AT), '{"Date":"2026-11-24","Time":"09:58:30","Name":"a.com","Uptime":300,"Requests":12}\n');
  const xml = monitoringRecord(vh, 'xml', AT);
  t.equal(xml.split('\n').length, 2, 'one line');
  // The XML statistics form of /monitoring: scalar members as attributes.
  t.equal(xml, '<VirtualHost Date="2026-11-24" Time="09:58:30" Name="a.com" Uptime="300" Requests="12"/>\n');
});
