// Black-box, two RT workers behind the real primary: the monitoring and origin commands that
// cross the primary->worker IPC (vhostslist, /monitoring/origin, /command/resetorigin), and purge
// when origin addresses are excluded. Origin state is per worker; hash balance makes each URL's
// misses go to one owner worker, and SVC_DEBUG_HEADERS tells the origin which worker asked.
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { call } from '../manager/fixtures/helpers.js';

let up = true;
const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  if (!up) { res.socket?.destroy(); return; }
  const body = `${req.url}`;
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const addr = `127.0.0.1:${origin.port}`;
const server = await startServer([
  { name: 'o.com', listen: `127.0.0.1:${port}`, origin: { address: [addr] } },
  { name: 'other.com', listen: `127.0.0.1:${port}`, origin: { address: [addr] } },
], {
  workers: 2, balance: 'hash', env: { SVC_DEBUG_HEADERS: '1' },
  extra: {
    // One failure excludes an address; no probe brings it back during the test (the origin
    // accepts TCP while it fails requests, so a probe would succeed).
    functions: { network: { http: { backEnd: { health: { failCount: 1, recoveryInterval: 600 } } } } },
    env: { management: { api: { allowList: [{ addr: '127.0.0.1', role: 'admin' }, { addr: '127.0.0.2', role: 'user' }] } } },
  },
});
t.teardown(async () => { await server.stop(); await origin.stop(); });

const fresh = () => new Agent({ pipelining: 0, keepAliveTimeout: 1 });
const get = async (path: string) => {
  const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: 'o.com' }, dispatcher: fresh() });
  await r.body.text();
  return { status: r.statusCode, cache: String(r.headers['x-cache']) };
};
const api = async (path: string) => {
  const r = await request(`http://127.0.0.1:${server.apiPort}${path}`);
  return { status: r.statusCode, json: await r.body.json() as Record<string, any> };
};
const originOf = async (vhost: string) => (await api(`/monitoring/origin?vhost=${vhost}`)).json.result.origin[0];
/** Workers (x-svc-worker) the origin saw asking for paths under the prefix. */
const askers = (prefix: string) => new Set(origin.seen.filter((s) => s.url.startsWith(prefix)).map((s) => String(s.headers['x-svc-worker'])));

t.test('vhostslist lists the served hosts through the real primary', async (t) => {
  const r = await api('/monitoring/vhostslist');
  t.equal(r.status, 200);
  t.match(r.json, { method: 'vhostslist', status: 'OK', result: ['o.com', 'other.com'] });
});

t.test('origin status is merged over the workers: Inactive as soon as one worker excluded the address', async (t) => {
  await get('/keep/1'); await get('/keep/2');
  const before = await originOf('o.com');
  t.same(before, { VirtualHost: 'o.com', Address: [{ [addr]: 'Active' }], Address2: [], ActiveIP: [{ '127.0.0.1': 0 }], InactiveIP: [] });
  up = false;
  t.equal((await get('/miss/0')).status, 502);
  t.equal(askers('/miss/').size, 1, 'one worker (the URL owner) met the failure');
  const after = await originOf('o.com');
  t.same(after.Address, [{ [addr]: 'Inactive' }]);
  t.same(after.InactiveIP, [{ '127.0.0.1': 0 }], 'a configured IP has TTL 0: it is never dropped, only probed');
  t.same(after.ActiveIP, []);
  t.same((await originOf('other.com')).Address, [{ [addr]: 'Active' }], 'exclusion is per host');
  const r = await api('/command/purge?url=o.com/keep/1');
  t.equal(r.json.result.Count, 1, 'purge still works while another worker can reach the origin');
});

t.test('purge does nothing when every worker has excluded every origin address', async (t) => {
  for (let n = 1; n < 40 && askers('/miss/').size < 2; n++) await get(`/miss/${n}`);
  t.same([...askers('/miss/')].sort(), ['0', '1'], 'both workers met a failure');
  const r = await api('/command/purge?url=o.com/keep/2');
  t.equal(r.status, 200);
  t.equal(r.json.result.Count, 0);
  t.equal((await api('/monitoring/fileinfo?url=o.com/keep/2')).json.result[0].Purge, 'N', 'the object is not purged');
  t.equal((await api('/command/expire?url=o.com/keep/2')).json.result.Count, 1, 'expire is not held back');
});

t.test('resetorigin brings every worker back: all Active, and purge works again', async (t) => {
  up = true;
  t.equal((await api('/command/resetorigin?vhost=nope.com')).status, 404);
  const r = await api('/command/resetorigin?vhost=o.com');
  t.equal(r.status, 200);
  t.match(r.json, { method: 'resetorigin', status: 'OK', result: ['o.com'] });
  t.same((await originOf('o.com')).Address, [{ [addr]: 'Active' }]);
  t.same((await originOf('o.com')).InactiveIP, []);
  await get('/keep/3');
  t.equal((await api('/command/purge?url=o.com/keep/3')).json.result.Count, 1);
  t.match((await api('/command/resetorigin')).json.result, ['o.com', 'other.com'], 'without vhost: every host');
});

/** A call from another loopback source address (bound to another role). */
const callFrom = (from: string, path: string) => call(server.apiPort, path, { from }) as Promise<{ status: number; json: Record<string, any> }>;

t.test('401 is spelled by the group of the path: Fail for deploy, fail elsewhere', async (t) => {
  const deploy = await callFrom('127.0.0.2', '/setting/deploy/local');
  t.equal(deploy.status, 401);
  t.match(deploy.json, { method: '/setting/deploy/local', status: 'Fail', reason: 'Unauthorized' });
  const resetorigin = await callFrom('127.0.0.2', '/command/resetorigin');
  t.equal(resetorigin.status, 401, 'resetorigin needs enablePurge, which the user role lacks');
  t.match(resetorigin.json, { method: 'resetorigin', status: 'fail' });
  t.equal((await callFrom('127.0.0.2', '/monitoring/vhostslist')).status, 200, 'the user role may monitor');
});
