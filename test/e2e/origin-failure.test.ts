// Black-box: origins that refuse, hang or die; failover between addresses and address2.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';

const good = await new TestOrigin().start();
const second = await new TestOrigin().otherwise((q, res) => { res.writeHead(200, { 'content-length': '6' }); res.end('second'); }).start();
const hang = await new TestOrigin().otherwise(() => undefined).start();
const dead = await freePort();
const dead2 = await freePort();
const port = await freePort();
const backEnd = { session: { connectTimeout: 1, receiveTimeout: 1 }, health: { failCount: 2, recoveryInterval: 1 } };
const server = await startServer([
  { name: 'failover.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`, `127.0.0.1:${good.port}`] } },
  { name: 'secondary.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`, `127.0.0.1:${dead2}`], address2: [`127.0.0.1:${second.port}`] } },
  { name: 'down.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`] } },
  { name: 'slow.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${hang.port}`] } },
], { extra: { functions: { network: { http: { backEnd } } } } });
t.teardown(async () => { await server.stop(); await good.stop(); await second.stop(); await hang.stop(); });

const get = (host: string, path: string) =>
  request(`http://127.0.0.1:${port}${path}`, { headers: { host } }).then(async (r) => ({ status: r.statusCode, body: await r.body.text() }));

t.test('a refused connection moves on to the next address', async (t) => {
  const r = await get('failover.com', '/f');
  t.equal(r.status, 200);
  t.equal(r.body, 'origin:GET /f');
});

t.test('address2 serves when every primary address fails', async (t) => {
  const r = await get('secondary.com', '/s');
  t.equal(r.status, 200);
  t.equal(r.body, 'second');
});

t.test('an origin that refuses connections gives 502 quickly with a short body', async (t) => {
  const start = Date.now();
  const r = await get('down.com', '/d');
  t.equal(r.status, 502);
  t.match(r.body, /502 Bad Gateway/);
  t.ok(Date.now() - start < 3000);
});

t.test('an origin that never answers gives 504 after the receive timeout', async (t) => {
  const start = Date.now();
  const r = await get('slow.com', '/h');
  t.equal(r.status, 504);
  t.match(r.body, /504 Gateway Timeout/);
  t.ok(Date.now() - start < 5000, 'bounded by the 1 s receive timeout');
});
