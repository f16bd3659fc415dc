// The origin side of the record in-process: the address used, socket reuse, times, sizes, the
// error kind of a failed exchange and failover, and the origin counters.
import net from 'node:net';
import type http from 'node:http';
import t from 'tap';
import { until } from '../helpers/wait.js';
import { workerCounters } from '../../lib/pipeline/parts/counters.js';
import { fieldIndex, STRIDE, type CounterField } from '../../lib/record/counter-layout.js';
import { TCP_ERROR } from '../../lib/cache/policy/results.js';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import type { OriginTrace } from '../../lib/origin/index.js';
import { startInProcess } from './fixtures/in-process.js';

const origin = await new TestOrigin().start();
const hang = await new TestOrigin().otherwise(() => undefined).start();
const dead = await freePort();
const port = await freePort();
const receive1s = { functions: { network: { http: { backEnd: { session: { receiveTimeout: 1 } } } } } };
const p = await startInProcess([
  { name: 'o.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
  { name: 'failover.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`, `127.0.0.1:${origin.port}`] } },
  { name: 'down.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`] } },
  { name: 'slow.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${hang.port}`] }, ...receive1s },
  { name: 'nxdomain.test', listen: `127.0.0.1:${port}`, origin: { address: ['no-such-origin.invalid:8080'] } },
  { name: 'one.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] }, functions: { network: { http: { backEnd: { session: { maxConnections: 1 } } } } } },
]);
t.teardown(async () => { await p.close(); await origin.stop(); await hang.stop(); });

const body = 'b'.repeat(2000);
origin.otherwise((_q, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length, 'cache-control': 'max-age=600' });
  res.end(body);
});

function get(host: string, path: string, method = 'GET'): Promise<string> {
  return rawRequest(port, `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, { timeoutMs: 10000 }).then((r) => r.text);
}

/**
 * The record of a URL and its origin exchange once that is over too (it may end after the
 * client transaction: the live trace, not the copy the sink made).
 */
async function recordOf(url: string): Promise<{ status: number; cacheResult: string; requestBodyBytes: number; origin: OriginTrace }> {
  const r = await p.waitRecord((x) => x.urlReceived === url);
  const origin = p.live.get(r.sessionId)!.origin!;
  await until(() => origin.done, 'the origin exchange ended');
  return { status: r.status, cacheResult: r.cacheResult as string, requestBodyBytes: r.requestBodyBytes, origin };
}

t.test('a miss records the origin address, a new connection, its times and sizes', async (t) => {
  await get('o.test', '/m1');
  const o = (await recordOf('/m1')).origin;
  t.equal(o.address, `127.0.0.1:${origin.port}`);
  t.equal(o.reused, false);
  t.equal(o.retried, false);
  t.equal(o.status, 200);
  t.equal(o.sockError, undefined);
  t.ok(o.dnsMs >= 0 && o.connectMs >= 0 && o.firstByteMs >= o.connectMs, `times in order (${o.dnsMs}, ${o.connectMs}, ${o.firstByteMs})`);
  t.equal(o.responseBodyBytes, 2000);
  t.ok(o.responseHeadBytes > 60 && o.requestHeadBytes > 30, 'both heads measured');
  t.equal(o.requestBodyBytes, 0);
});

t.test('the next miss on the same origin reuses the kept-alive connection', async (t) => {
  await get('o.test', '/m2');
  await get('o.test', '/m3');
  const r = await recordOf('/m3');
  t.equal(r.origin.reused, true);
  t.equal(r.origin.connectMs, 0);
});

t.test('a miss that waited in the pool for the one origin connection is traced in full on that connection', async (t) => {
  await get('one.test', '/q0'); // the one connection is open and idle
  const first = (await recordOf('/q0')).origin;
  let hold: http.ServerResponse | undefined;
  const arrived = new Promise<void>((resolve) => origin.on('/q1', (_q, res) => { hold = res; resolve(); }));
  const a = get('one.test', '/q1');
  await arrived;
  const b = get('one.test', '/q2');
  await until(() => p.worker.statsProbe().origin('one.test')?.queued === 1, 'the second miss queued behind the first');
  hold!.writeHead(200, { 'content-length': '2', 'cache-control': 'max-age=600' });
  hold!.end('q1');
  await Promise.all([a, b]);
  const q = (await recordOf('/q2')).origin;
  t.equal(q.status, 200);
  t.equal(q.reused, true, 'on the kept-alive connection');
  t.equal(q.connectMs, 0);
  t.equal(q.socketId, first.socketId, 'the one connection');
  t.equal(q.socketUses, 3, 'its third exchange');
  t.ok(q.requestHeadBytes > 30 && q.responseHeadBytes > 60, `both heads measured (${q.requestHeadBytes}, ${q.responseHeadBytes})`);
  t.equal(q.responseBodyBytes, 2000);
  t.ok(q.firstByteMs > 0 && q.completeMs >= q.firstByteMs, `times in order (${q.firstByteMs}, ${q.completeMs})`);
});

t.test('a refused first address and a good second one: retried, the address that answered', async (t) => {
  await get('failover.test', '/fo');
  const r = await recordOf('/fo');
  t.equal(r.status, 200);
  t.equal(r.origin.retried, true);
  t.equal(r.origin.attempts, 2);
  t.equal(r.origin.address, `127.0.0.1:${origin.port}`);
  t.equal(r.origin.sockError, undefined, 'the exchange itself succeeded');
});

t.test('an origin that refuses is recorded as TCP_ERROR with Server-Close', async (t) => {
  await get('down.test', '/refused');
  const r = await recordOf('/refused');
  t.equal(r.cacheResult, TCP_ERROR);
  t.equal(r.origin.sockError, 'Server-Close');
  t.equal(r.origin.status, 0);
  t.equal(r.origin.done, true);
});

t.test('an origin that does not answer in time is recorded with Receive-Timeout', async (t) => {
  await get('slow.test', '/slow');
  const r = await recordOf('/slow');
  t.equal(r.status, 504);
  t.equal(r.origin.sockError, 'Receive-Timeout');
});

t.test('a domain that does not resolve is recorded with Non-Existent-Domain', async (t) => {
  await get('nxdomain.test', '/nx');
  const r = await recordOf('/nx');
  t.equal(r.status, 502);
  t.equal(r.origin.sockError, 'Non-Existent-Domain');
  t.equal(r.origin.address, '', 'no address was tried');
});

t.test('a pass-through the client leaves before the answer ends with Client-Close', async (t) => {
  let hold: http.ServerResponse | undefined;
  const arrived = new Promise<void>((resolve) => origin.on('/post-slow', (_q, res) => { hold = res; resolve(); }));
  const s = net.connect(port, '127.0.0.1', () => s.write('POST /post-slow HTTP/1.1\r\nHost: o.test\r\nContent-Length: 5\r\n\r\nhello'));
  await arrived;
  s.destroy();
  const r = await recordOf('/post-slow');
  hold?.destroy();
  t.equal(r.status, 0);
  t.equal(r.requestBodyBytes, 5, 'the body the client sent');
  t.equal(r.origin.requestBodyBytes, 5, 'and the origin got');
  t.equal(r.origin.sockError, 'Client-Close');
});

t.test('the origin counters count each exchange once, with its bytes', async (t) => {
  workerCounters.takeDeltas();
  await get('o.test', '/c1');
  await get('o.test', '/c1'); // a hit: no origin exchange
  await get('down.test', '/c2');
  const a = await recordOf('/c1');
  await recordOf('/c2');
  const d = workerCounters.takeDeltas();
  const row = (host: string, f: CounterField): number => d.values[d.hosts.indexOf(host) * STRIDE + fieldIndex(f)]!;
  t.equal(d.total[fieldIndex('originRequests')], 2);
  t.equal(d.total[fieldIndex('originErrors')], 1);
  t.equal(row('o.test', 'originRequests'), 1);
  t.equal(row('down.test', 'originErrors'), 1);
  t.equal(row('o.test', 'originBytesReceived'), a.origin.responseHeadBytes + a.origin.responseBodyBytes);
  t.equal(row('o.test', 'originBytesSent'), a.origin.requestHeadBytes);
});
