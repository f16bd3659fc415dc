// Black-box: events.onPurgeRequest.propagation. A real node forwards every invalidation call it
// accepts (each command, sync and async, POST purge, the PURGE method) once to each node of its
// nodelist, never to its own addresses, before it runs here and without waiting; the forwarded
// call carries X-SVC-Propagated and is never forwarded again. Peers are scripted HTTP servers on
// 127.0.0.2 ... 127.0.0.9, each on the node's service port number.
import http from 'node:http';
import t from 'tap';
import { TestOrigin, type SeenRequest } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { call, infoLog, LOCAL_LOGS } from '../lifecycle/fixtures/node.js';

const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(req.url) });
  res.end(req.url);
});
t.teardown(() => origin.stop());

const port = await freePort();
/** 127.0.0.2 ... 127.0.0.9 on the node's service port: management calls and PURGE alike reach them. */
const peers = await Promise.all(Array.from({ length: 8 }, (_, i) => new TestOrigin().start(`127.0.0.${i + 2}`, port)));
t.teardown(() => Promise.all(peers.map((p) => p.stop())));
/** Stands for this node on 127.0.0.1 at another port: an own address is never a peer, whatever the port. */
const selfStandIn = await new TestOrigin().start('127.0.0.1');
t.teardown(() => selfStandIn.stop());

async function node(nodelist: string[], servicePort = port): Promise<RunningServer> {
  const server = await startServer([
    { name: 'a.com', listen: `127.0.0.1:${servicePort}`, origin: { address: [`127.0.0.1:${origin.port}`] }, functions: { network: { cache: { enablePurgeMethod: true } } } },
  ], { extra: { env: { ...LOCAL_LOGS.env, management: { server: { events: { onPurgeRequest: { propagation: { enable: true, nodelist } } } } } } } });
  t.teardown(() => server.stop());
  return server;
}

const eight = peers.map((_, i) => `127.0.0.${i + 2}:${port}`);
const a = await node(eight);

function purgeMethod(path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'PURGE', headers: { host: 'a.com', ...headers }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const seenBy = (p: TestOrigin, url: string): SeenRequest[] => p.seen.filter((s) => s.url === url);

t.test('each invalidation call is forwarded once to all 8 nodes of the nodelist, with the marker header', async (t) => {
  const calls: Array<[string, string]> = [
    ['GET', '/command/purge?url=a.com/p/1'],
    ['GET', '/command/expire?url=a.com/p/2'],
    ['GET', '/command/hardpurge?url=a.com/p/*'],
    ['GET', '/command/expireafter?sec=60&url=a.com/p/3'],
    ['GET', '/command/async/purge?url=a.com/p/4'],
    ['GET', '/command/async/hardpurge?url=a.com/p/5'],
  ];
  for (const [, url] of calls) t.equal((await call(a.apiPort, url)).status < 500, true, url);
  const post = await call(a.apiPort, '/command/purge', { body: 'url=a.com/p/6', type: 'application/x-www-form-urlencoded' });
  t.ok(post.status < 500, 'POST purge answered');
  t.ok(await waitFor(() => peers.every((p) => calls.every(([, url]) => seenBy(p, url).length === 1) && seenBy(p, '/command/purge').length === 1)), 'every peer got every call');
  for (const p of peers) {
    for (const s of p.seen) t.equal(s.headers['x-svc-propagated'], '1', `${s.url} marked`);
    const body = seenBy(p, '/command/purge')[0]!;
    t.equal(body.method, 'POST');
    t.equal(body.body.toString(), 'url=a.com/p/6', 'the POST body is forwarded as is');
    t.equal(body.headers['content-type'], 'application/x-www-form-urlencoded');
  }
});

t.test('a PURGE on the service port is forwarded to each peer on that port, with its Host and X-Invalidate', async (t) => {
  await purgeMethod('/m/1', { 'x-invalidate': 'expire' });
  t.ok(await waitFor(() => peers.every((p) => seenBy(p, '/m/1').length === 1)), 'every peer got the PURGE');
  for (const p of peers) t.match(seenBy(p, '/m/1')[0], { method: 'PURGE', headers: { host: 'a.com', 'x-invalidate': 'expire', 'x-svc-propagated': '1' } });
});

t.test('the call is forwarded before it runs here and the answer does not wait for the peers', async (t) => {
  let release: () => void = () => undefined;
  peers[0]!.on('/command/purge', (_req, res) => { release = () => { res.writeHead(200); res.end('{}'); }; });
  t.teardown(() => {
    release();
    peers[0]!.on('/command/purge', (_req, res) => { res.writeHead(200); res.end('{}'); });
  });
  const r = await call(a.apiPort, '/command/purge?url=a.com/slow');
  t.ok(r.status === 200 || r.status === 404, `answered (${r.status}) while a peer still holds its answer`);
  // The forward is sent at recognition without waiting: it may reach the peer just after the
  // node's answer, but it reaches it, and that peer has still not answered.
  t.ok(await waitFor(() => seenBy(peers[0]!, '/command/purge?url=a.com/slow').length === 1), 'the peer got the call it has not answered yet');
});

t.test('a refused call (bad target) is not forwarded', async (t) => {
  const r = await call(a.apiPort, '/command/purge?url=unknown.example/x');
  t.equal(r.status, 502);
  await call(a.apiPort, '/command/purge?url=a.com/after-bad');
  t.ok(await waitFor(() => seenBy(peers[7]!, '/command/purge?url=a.com/after-bad').length === 1));
  t.equal(peers[7]!.seen.filter((s) => s.url.includes('unknown.example')).length, 0);
});

t.test('a call carrying the marker header is run here and not forwarded again (no loops)', async (t) => {
  const r = await new Promise<number>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: a.apiPort, path: '/command/purge?url=a.com/marked', headers: { 'x-svc-propagated': '1' } }, (res) => { res.resume(); resolve(res.statusCode ?? 0); }).on('error', reject);
  });
  t.ok(r === 200 || r === 404, 'run here');
  await purgeMethod('/m/marked', { 'x-svc-propagated': '1' });
  // A call forwarded after them reaches every peer; the marked ones never did.
  await call(a.apiPort, '/command/purge?url=a.com/unmarked');
  t.ok(await waitFor(() => peers.every((p) => seenBy(p, '/command/purge?url=a.com/unmarked').length === 1)));
  for (const p of peers) t.equal(p.seen.filter((s) => s.url.includes('marked') && !s.url.includes('unmarked')).length, 0, 'the marked calls stayed here');
});

t.test('the node never forwards to its own addresses, and a peer that cannot be reached is a line in the info log', async (t) => {
  const closed = await freePort('127.0.0.9');
  const b = await node([`127.0.0.1:${selfStandIn.port}`, '127.0.0.1', ...eight.slice(0, 5), `127.0.0.9:${closed}`], await freePort());
  await call(b.apiPort, '/command/purge?url=a.com/self');
  t.ok(await waitFor(() => peers.slice(0, 5).every((p) => seenBy(p, '/command/purge?url=a.com/self').length === 1)), 'the 5 peers got it');
  t.ok(await waitFor(async () => /invalidation propagation failed/.test(await infoLog(b))), 'the failure is logged');
  const line = (await infoLog(b)).split('\n').find((l) => l.includes('invalidation propagation failed'))!;
  t.match(line, `127.0.0.9:${closed}`);
  t.match(line, /ECONNREFUSED/);
  t.equal(selfStandIn.seen.length, 0, 'nothing was sent to an address of the node itself');
  t.equal(peers.slice(5, 7).reduce((n, p) => n + seenBy(p, '/command/purge?url=a.com/self').length, 0), 0, 'nor to nodes not listed');
});
