// The finish stage in-process: every transaction ends in one record, whatever ended it, and the
// worker's counters add up to the records and to what the clients received.
import net from 'node:net';
import type http from 'node:http';
import t from 'tap';
import { until } from '../helpers/wait.js';
import { workerCounters } from '../../lib/pipeline/parts/counters.js';
import { COUNTER_FIELDS, STRIDE, TIME_BUCKETS_MS, cacheResultIndex, fieldIndex, type CounterField } from '../../lib/record/counter-layout.js';
import { TCP_ERROR, TCP_HIT, TCP_MISS, TCP_NONE } from '../../lib/cache/policy/results.js';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startInProcess, type Rec } from './fixtures/in-process.js';

const origin = await new TestOrigin().start();
const dead = await freePort();
const port = await freePort();
const p = await startInProcess([
  { name: 'rec.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  { name: 'down.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`] } },
]);
t.teardown(async () => { await p.close(); await origin.stop(); });

const body1k = 'x'.repeat(1024);
origin.on('/obj', (_q, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body1k.length, 'cache-control': 'max-age=600' });
  res.end(body1k);
});

/** One request on its own connection (closed by the server after the answer): every byte seen. */
function raw(path: string, opts: { method?: string; host?: string; target?: string } = {}): Promise<{ sent: number; received: number; text: string }> {
  const req = `${opts.method ?? 'GET'} ${opts.target ?? path} HTTP/1.1\r\nHost: ${opts.host ?? 'rec.test'}\r\nConnection: close\r\n\r\n`;
  return rawRequest(port, req).then((r) => ({ sent: Buffer.byteLength(req), received: Buffer.byteLength(r.text, 'latin1'), text: r.text }));
}

const byUrl = (url: string, extra: (r: Rec) => boolean = () => true) => (r: Rec): boolean => r.urlReceived === url && extra(r);

t.test('a miss and then a hit are each recorded once, with the bytes that crossed the connection', async (t) => {
  const miss = await raw('/obj');
  const hit = await raw('/obj');
  t.match(hit.text, /x-cache: TCP_HIT/i);
  const recs = await Promise.all([p.waitRecord(byUrl('/obj', (r) => r.cacheResult === TCP_MISS)), p.waitRecord(byUrl('/obj', (r) => r.cacheResult === TCP_HIT))]);
  t.equal(p.records.filter((r) => r.urlReceived === '/obj').length, 2, 'one record per transaction');
  for (const [r, client] of [[recs[0], miss], [recs[1], hit]] as const) {
    t.equal(r.host, 'rec.test');
    t.equal(r.method, 'GET');
    t.equal(r.status, 200);
    t.equal(r.completed, true);
    t.equal(r.requestHeadBytes, client.sent, 'the request head as sent');
    t.equal(r.requestBodyBytes, 0);
    t.equal(r.responseBodyBytes, 1024);
    t.equal(r.responseHeadBytes + r.responseBodyBytes, client.received, 'head and body: what the client received');
    t.ok(r.firstByteMs >= 0 && r.firstByteMs <= r.totalMs, 'first byte before the end');
    t.equal(r.clientAddress, '127.0.0.1');
    t.equal(r.serverPort, port);
    t.equal(r.fromSibling, false);
    t.match(r.ctxId, /^[0-9a-f-]{36}$/);
  }
  t.not(recs[0].sessionId, recs[1].sessionId);
  t.not(recs[0].ctxId, recs[1].ctxId);
});

t.test('an absolute-form request keeps the target as received beside the URL the cache used', async (t) => {
  await raw('/abs', { target: 'http://rec.test/abs?q=1' });
  const r = await p.waitRecord((x) => x.urlReceived === 'http://rec.test/abs?q=1');
  t.equal(r.url, '/abs?q=1');
});

t.test('a request for an unknown host is recorded as a 404 without a host and without a cache lookup', async (t) => {
  const client = await raw('/nobody', { host: 'unknown.test' });
  const r = await p.waitRecord(byUrl('/nobody'));
  t.equal(r.status, 404);
  t.equal(r.host, null);
  t.equal(r.cacheResult, TCP_NONE);
  t.equal(r.completed, true);
  t.equal(r.responseHeadBytes + r.responseBodyBytes, client.received);
});

t.test('a HEAD is recorded with its head and no body bytes', async (t) => {
  const client = await raw('/obj', { method: 'HEAD' });
  const r = await p.waitRecord(byUrl('/obj', (x) => x.method === 'HEAD'));
  t.equal(r.status, 200);
  t.equal(r.responseBodyBytes, 0);
  t.equal(r.responseHeadBytes, client.received);
  t.equal(r.completed, true);
});

t.test('an origin that refuses connections is recorded as TCP_ERROR with the 502 sent', async (t) => {
  const client = await raw('/refused', { host: 'down.test' });
  t.match(client.text, /^HTTP\/1.1 502/);
  const r = await p.waitRecord(byUrl('/refused'));
  t.equal(r.host, 'down.test');
  t.equal(r.status, 502);
  t.equal(r.cacheResult, TCP_ERROR);
  t.equal(r.completed, true);
});

t.test('a client that goes away in the middle of the body is recorded as incomplete', async (t) => {
  let hold: http.ServerResponse | undefined;
  origin.on('/half', (_q, res) => {
    res.writeHead(200, { 'content-length': '200000', 'cache-control': 'no-store' });
    res.write(Buffer.alloc(1000, 97));
    hold = res;
  });
  const got = await new Promise<number>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write('GET /half HTTP/1.1\r\nHost: rec.test\r\n\r\n'));
    let n = 0;
    s.on('data', (c: Buffer) => { n += c.length; if (/\r\n\r\na/.test(c.toString('latin1'))) s.destroy(); });
    s.on('close', () => resolve(n));
  });
  const r = await p.waitRecord(byUrl('/half'));
  hold?.destroy();
  t.equal(r.status, 200, 'the answer had started');
  t.equal(r.completed, false);
  t.ok(r.responseBodyBytes > 0 && r.responseBodyBytes < 200000, `part of the body went out (${r.responseBodyBytes})`);
  t.ok(r.responseHeadBytes + r.responseBodyBytes >= got, 'at least what the client read');
});

t.test('a client that goes away before the answer is recorded with status 0', async (t) => {
  let hold: http.ServerResponse | undefined;
  const arrived = new Promise<void>((resolve) => origin.on('/never', (_q, res) => { hold = res; resolve(); }));
  const s = net.connect(port, '127.0.0.1', () => s.write('GET /never HTTP/1.1\r\nHost: rec.test\r\n\r\n'));
  await arrived;
  s.destroy();
  const r = await p.waitRecord(byUrl('/never'));
  hold?.destroy();
  t.equal(r.status, 0);
  t.equal(r.completed, false);
  t.equal(r.firstByteMs, -1);
  t.equal(r.responseHeadBytes + r.responseBodyBytes, 0);
  t.equal(r.cacheResult, TCP_MISS, 'the miss was decided before the client left');
});

t.test('pipelined requests whose connection dies each end in one record', async (t) => {
  let hold: http.ServerResponse | undefined;
  const arrived = new Promise<void>((resolve) => origin.on('/pipe-slow', (_q, res) => { hold = res; resolve(); }));
  const s = net.connect(port, '127.0.0.1', () => s.write(
    'GET /pipe-slow HTTP/1.1\r\nHost: rec.test\r\n\r\nGET /obj?p=2 HTTP/1.1\r\nHost: rec.test\r\n\r\nGET /obj?p=3 HTTP/1.1\r\nHost: rec.test\r\n\r\n'));
  await arrived;
  // The two behind it are being served too (their answers wait for the first's to go out).
  await until(() => origin.count('/obj') >= 1 && origin.seen.some((x) => x.url === '/obj?p=3') && origin.seen.some((x) => x.url === '/obj?p=2'), 'the origin saw /obj and both revalidations');
  s.destroy();
  const recs = await Promise.all(['/pipe-slow', '/obj?p=2', '/obj?p=3'].map((u) => p.waitRecord(byUrl(u))));
  hold?.destroy();
  for (const r of recs) {
    t.equal(p.records.filter((x) => x.sessionId === r.sessionId).length, 1, `${r.urlReceived}: once`);
    t.equal(r.completed, false);
    t.equal(r.status, 0, `${r.urlReceived}: nothing of it went out`);
  }
});

t.test('the counters add up to the records and to what the clients received', async (t) => {
  workerCounters.takeDeltas();
  const before = p.records.length;
  const clients = await Promise.all([
    raw('/obj'), raw('/obj', { method: 'HEAD' }), raw('/other'), raw('/x', { host: 'unknown.test' }), raw('/e', { host: 'down.test' }),
  ]);
  let hold: http.ServerResponse | undefined;
  const arrived = new Promise<void>((resolve) => origin.on('/gone', (_q, res) => { hold = res; resolve(); }));
  const s = net.connect(port, '127.0.0.1', () => s.write('GET /gone HTTP/1.1\r\nHost: rec.test\r\n\r\n'));
  await arrived;
  s.destroy();
  await p.waitRecord(byUrl('/gone'));
  hold?.destroy();
  const recs = p.records.slice(before);
  t.equal(recs.length, 6);
  const d = workerCounters.takeDeltas();
  const node = (f: CounterField): number => d.total[fieldIndex(f)]!;
  t.equal(node('requests'), 6);
  const answered = node('responses1xx') + node('responses2xx') + node('responses3xx') + node('responses4xx') + node('responses5xx');
  t.equal(node('requests'), answered + node('unanswered'), 'requests = responses by class + unanswered');
  t.equal(node('responses2xx'), 3);
  t.equal(node('responses4xx'), 1);
  t.equal(node('responses5xx'), 1);
  t.equal(node('unanswered'), 1);
  t.equal(node('incomplete'), 1);
  const received = clients.reduce((n, c) => n + c.received, 0);
  t.equal(node('responseHeadBytes') + node('responseBodyBytes'), received, 'bytes out = bytes the clients received');
  t.equal(node('requestHeadBytes'), recs.reduce((n, r) => n + r.requestHeadBytes, 0));
  t.equal(node('totalMs'), recs.reduce((n, r) => n + r.totalMs, 0));
  t.equal(d.total[cacheResultIndex(TCP_HIT)], 2, 'the GET and the HEAD of /obj hit');
  t.equal(d.total[cacheResultIndex(TCP_ERROR)], 1);
  // The 404 had no host: row 0.
  t.equal(d.values[fieldIndex('responses4xx')], 1, 'row 0: no virtual host');
  const host = d.hosts.indexOf('rec.test');
  t.ok(host > 0);
  t.equal(d.values[host * STRIDE + fieldIndex('requests')], 4);
  const down = d.hosts.indexOf('down.test');
  t.equal(d.values[down * STRIDE + fieldIndex('responses5xx')], 1);
  t.equal(d.stride, COUNTER_FIELDS.length + 14 + 2 * (TIME_BUCKETS_MS.length + 1), 'fields, 14 cache results, two time histograms');
  t.equal(workerCounters.takeDeltas().total[fieldIndex('requests')], 0, 'a second read has nothing new');
});
