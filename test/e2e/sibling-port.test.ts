// Black-box: the sibling ports (baseHostingPort + i, loopback) carry hash-balance hand-offs
// between our own workers. They trust what a sibling says (no second X-Forwarded-For entry, no
// second hand-off), so a local client that is not one of our workers must not be served there;
// and a hand-off must tell the owner's origin who the real client is, not 127.0.0.1.
import http from 'node:http';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

const origin = await new TestOrigin().otherwise((_q, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2', 'cache-control': 'no-store' });
  res.end('ok');
}).start();
const port = await freePort();
const server = await startServer([{ name: 'hash.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }],
  { workers: 2, balance: 'hash', env: { SVC_DEBUG_HEADERS: '1' } });
// One keep-alive connection from another loopback address: it stays with the one worker that
// accepted it, so the URLs the other worker owns are handed off.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
t.teardown(async () => { agent.destroy(); await server.stop(); await origin.stop(); });

function get(path: string): Promise<{ status: number; worker: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent, localAddress: '127.0.0.2', headers: { host: 'hash.test' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode!, worker: String(res.headers['x-svc-worker']), body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
  });
}

t.test('a hand-off tells the owner\'s origin the real client address, once', async (t) => {
  const owners = new Set<string>();
  for (let i = 0; i < 16; i++) {
    const r = await get(`/xff/${i}`);
    t.equal(r.status, 200);
    owners.add(r.worker);
  }
  t.same([...owners].sort(), ['0', '1'], 'both workers owned some of the URLs asked on one connection: some were handed off');
  const fwd = origin.seen.filter((s) => s.url.startsWith('/xff/')).map((s) => s.headers['x-forwarded-for']);
  t.equal(fwd.length, 16);
  t.ok(fwd.every((x) => x === '127.0.0.2'), `X-Forwarded-For is the client, not the sibling hop: ${JSON.stringify([...new Set(fwd)])}`);
});

for (const [what, field] of [
  ['a sibling mark without the secret', 'X-Svc-Sibling: 1\r\n'],
  ['a sibling mark with a guessed secret', 'X-Svc-Sibling: 1:0123456789abcdef0123456789abcdef\r\n'],
  ['no sibling mark', ''],
] as const) {
  t.test(`a local client on a sibling port with ${what} is refused, and nothing reaches the origin`, async (t) => {
    const path = `/spoof/${what.replaceAll(' ', '-')}`;
    for (let i = 0; i < 2; i++) {
      const r = await rawRequest(server.basePort + i,
        `GET ${path} HTTP/1.1\r\nHost: hash.test\r\n${field}X-Forwarded-For: 203.0.113.7\r\nConnection: close\r\n\r\n`, { timeoutMs: 10_000 });
      t.equal(r.status, 403, `sibling port ${server.basePort + i}`);
    }
    t.equal(origin.count(path), 0, 'the origin never saw the request (nor its forged X-Forwarded-For)');
  });
}
