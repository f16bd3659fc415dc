// The hash-balance hand-off with real parts: a client-facing node:http server whose handler hands
// each request to a sibling "owner" port (a recording server, or nothing at all), and a real
// origin behind an OriginSet for the local fallback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { request } from 'undici';
import { OriginSet } from '../../lib/origin/index.js';
import type { HostRuntime } from '../../lib/pipeline/parts/host-runtime.js';
import { SIBLING_HEADER, Siblings } from '../../lib/pipeline/parts/hand-off.js';
import { CTX_HEADER } from '../../lib/pipeline/parts/sibling-header.js';
import { TransactionRecord, type Transaction } from '../../lib/pipeline/parts/transaction.js';
import { TestOrigin } from '../helpers/origin.js';
import { consecutiveFreePorts } from '../helpers/ports.js';

const origin = await new TestOrigin().start();
// Two internal ports: index 0 is a recording owner, index 1 has nobody listening (a dead owner).
const basePort = await consecutiveFreePorts(2);
const ownerSeen: http.IncomingHttpHeaders[] = [];
const owner = http.createServer((req, res) => {
  ownerSeen.push(req.headers);
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-length': '5' }); res.end('owner'); });
});
await new Promise<void>((r) => owner.listen(basePort, '127.0.0.1', () => r()));

const host = {
  name: 'a.com', logName: 'a.com', enable: true, aliases: [], listen: null, forwardedFor: true,
  upload: { bufferUpTo: 65536, minBytesPerPeriod: 0, periodMs: 20_000 },
  origin: new OriginSet({ vhost: 'a.com', protocol: 'http', address: [`127.0.0.1:${origin.port}`], address2: [] }),
} as unknown as HostRuntime;
const siblings = new Siblings(basePort, 2, 'test-secret');
let ownerIndex = 0;
const front = http.createServer((req, res) => {
  const url = req.url!.startsWith('http://') ? new URL(req.url!).pathname : req.url!;
  const tx = new TransactionRecord(req, res, 1) as Transaction;
  tx.host = host;
  tx.url = url;
  siblings.forward(tx, ownerIndex);
});
await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
const frontPort = (front.address() as AddressInfo).port;
t.teardown(async () => {
  await siblings.close();
  await host.origin.close();
  front.closeAllConnections();
  owner.closeAllConnections();
  await new Promise((r) => front.close(r));
  await new Promise((r) => owner.close(r));
  await origin.stop();
});

t.test('the owner receives the routed host name as Host, whatever Host the client sent', async (t) => {
  ownerIndex = 0;
  const r = await request(`http://127.0.0.1:${frontPort}/x`, { headers: { host: 'b.com' } });
  t.equal(await r.body.text(), 'owner');
  const seen = ownerSeen.at(-1)!;
  t.equal(seen.host, 'a.com');
  t.equal(seen[SIBLING_HEADER], '2:test-secret', 'marked as handed over by worker 2, with the secret');
  t.match(seen[CTX_HEADER], /^[0-9a-f-]{36}$/, 'the x-ctx-id of the chain goes along');
  t.equal(seen['x-forwarded-for'], '127.0.0.1');
});

t.test('when the owner is unreachable a bodiless request is served here from the origin', async (t) => {
  ownerIndex = 1;
  const r = await request(`http://127.0.0.1:${frontPort}/local`, { headers: { host: 'a.com' } });
  t.equal(r.statusCode, 200);
  t.equal(await r.body.text(), 'origin:GET /local');
  const seen = origin.seen.find((s) => s.url === '/local')!;
  t.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
  t.equal(seen.headers[SIBLING_HEADER], undefined, 'no sibling mark reaches the origin');
  t.equal(seen.headers[CTX_HEADER], undefined, 'nor the internal x-ctx-id field');
});

t.test('when the owner is unreachable a request with a body is served here with the body intact', async (t) => {
  ownerIndex = 1;
  const r = await request(`http://127.0.0.1:${frontPort}/local-post`, { method: 'POST', headers: { host: 'a.com' }, body: 'payload' });
  t.equal(r.statusCode, 200);
  t.equal(await r.body.text(), 'origin:POST /local-post');
  t.equal(origin.seen.find((s) => s.url === '/local-post')!.body.toString(), 'payload');
});
