// Black-box: PURGE on the service port, allowed only for hosts that enable it and only from the
// management allowList with enablePurge.
import t from 'tap';
import http from 'node:http';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';

const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  const body = `${req.url}`;
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const server = await startServer([
  { name: 'on.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] }, functions: { network: { cache: { enablePurgeMethod: true } } } },
  { name: 'off.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
], { extra: { env: { management: { api: { allowList: [{ addr: '127.0.0.1', role: 'admin' }, { addr: '127.0.0.2', role: 'user' }] } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** node:http, because it binds the client's source address (127.0.0.2 ...) reliably. */
const send = (method: string, host: string, path: string, headers: Record<string, string> = {}, from = '127.0.0.1') =>
  new Promise<{ status: number; text: string; cache: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers: { host, ...headers }, localAddress: from, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, cache: String(res.headers['x-cache']) }));
    });
    req.on('error', reject);
    req.end();
  });

t.test('PURGE from an allowed address invalidates the URL like the purge command', async (t) => {
  await send('GET', 'on.com', '/p/1');
  t.equal((await send('GET', 'on.com', '/p/1')).cache, 'TCP_HIT');
  const r = await send('PURGE', 'on.com', '/p/1');
  t.equal(r.status, 200);
  t.match(JSON.parse(r.text), { method: 'purge', status: 'OK', result: { Count: 1 } });
  t.equal((await send('GET', 'on.com', '/p/1')).cache, 'TCP_REFRESH_MISS');
});

t.test('X-Invalidate selects expire or hardpurge', async (t) => {
  await send('GET', 'on.com', '/p/2');
  const r = await send('PURGE', 'on.com', '/p/2', { 'x-invalidate': 'hardpurge' });
  t.match(JSON.parse(r.text), { method: 'hardpurge', result: { Count: 1 } });
  t.equal((await send('GET', 'on.com', '/p/2')).cache, 'TCP_MISS');
});

t.test('PURGE from an address on no allowList entry, or whose role lacks enablePurge, is refused with 401 and changes nothing', async (t) => {
  await send('GET', 'on.com', '/p/3');
  const r = await send('PURGE', 'on.com', '/p/3', {}, '127.0.0.3');
  t.equal(r.status, 401, r.text);
  t.match(JSON.parse(r.text), { version: '0.1.0', method: 'purge', status: 'fail', reason: 'Unauthorized' });
  const user = await send('PURGE', 'on.com', '/p/3', {}, '127.0.0.2');
  t.equal(user.status, 401, 'an allowList address whose role lacks enablePurge is refused too');
  t.equal((await send('GET', 'on.com', '/p/3')).cache, 'TCP_HIT');
});

t.test('PURGE on a host that does not enable it is 405', async (t) => {
  t.equal((await send('PURGE', 'off.com', '/p/4')).status, 405);
});
