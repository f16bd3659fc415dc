// Black-box: origins that refuse, hang or die; failover between addresses and address2.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const good = await new TestOrigin().start();
const second = await new TestOrigin().otherwise((_q, res) => { res.writeHead(200, { 'content-length': '6' }); res.end('second'); }).start();
const hang = await new TestOrigin().otherwise(() => undefined).start();
let flaky = await new TestOrigin().otherwise((_q, res) => { res.writeHead(200, { 'content-length': '5' }); res.end('flaky'); }).start();
const flakyPort = flaky.port;
const dead = await freePort();
const dead2 = await freePort();
const port = await freePort();
const backEnd = { session: { connectTimeout: 1, receiveTimeout: 1 }, health: { failCount: 2, recoveryInterval: 1 } };
const server = await startServer([
  { name: 'failover.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`, `127.0.0.1:${good.port}`] } },
  { name: 'secondary.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`, `127.0.0.1:${dead2}`], address2: [`127.0.0.1:${second.port}`] } },
  { name: 'down.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`] } },
  { name: 'recover.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${flakyPort}`], address2: [`127.0.0.1:${second.port}`] } },
  { name: 'slow.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${hang.port}`] } },
], { extra: { functions: { network: { http: { backEnd } } } } });
t.teardown(async () => { await server.stop(); await good.stop(); await second.stop(); await hang.stop(); await flaky.stop(); });

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

t.test('an origin that refuses connections gives 502 with a short body', async (t) => {
  const r = await get('down.com', '/d');
  t.equal(r.status, 502);
  t.match(r.body, /502 Bad Gateway/);
});

t.test('an origin that never answers gives 504 after the receive timeout', async (t) => {
  const r = await get('slow.com', '/h');
  t.equal(r.status, 504);
  t.match(r.body, /504 Gateway Timeout/);
});

interface OriginState { Address: Record<string, string>[]; Address2: Record<string, string>[] }

async function originState(vhost: string): Promise<OriginState> {
  const r = await request(`http://127.0.0.1:${server.apiPort}/monitoring/origin?vhost=${vhost}`);
  const json = await r.body.json() as { result: { origin: OriginState[] } };
  return json.result.origin[0]!;
}

function waitForState(vhost: string, address: string, state: string, timeoutMs = 10000): Promise<boolean> {
  return waitFor(async () => (await originState(vhost)).Address.some((a) => a[address] === state), { timeoutMs, intervalMs: 100 });
}

t.test('an address that stops answering is excluded after failCount failures and probed back when it returns', async (t) => {
  const addr = `127.0.0.1:${flakyPort}`;
  t.equal((await get('recover.com', '/r1')).body, 'flaky', 'the primary address serves while it is up');
  t.same((await originState('recover.com')).Address, [{ [addr]: 'Active' }]);

  await flaky.stop();
  const during: string[] = [];
  for (let i = 0; i < 3; i++) during.push((await get('recover.com', `/r2-${i}`)).body);
  t.same(during, ['second', 'second', 'second'], 'address2 serves every request while the address is down');
  t.ok(await waitForState('recover.com', addr, 'Inactive', 3000), 'Inactive after failCount (2) failures');
  const atStop = second.seen.length;
  t.equal((await get('recover.com', '/r3')).body, 'second');
  t.equal(second.seen.length, atStop + 1);

  flaky = await new TestOrigin().otherwise((_q, res) => { res.writeHead(200, { 'content-length': '5' }); res.end('flaky'); }).start('127.0.0.1', flakyPort);
  t.ok(await waitForState('recover.com', addr, 'Active', 10000), 'the probe (every recoveryInterval, 1 s) brings it back to Active');
  t.equal((await get('recover.com', '/r4')).body, 'flaky', 'requests go to the recovered address again');
});
