// Black-box: mode.facadeHost. The facade's requests are handled entirely by the named host (its
// origin, rules and cache) while the facade keeps its own statistics and access log.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, startServer, writeSetting } from '../helpers/server.js';
import { pollUntil, waitFor } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
origin.on('/real/obj', (_q, res) => { res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': 3 }); res.end('obj'); });
const port = await freePort();
const logs = { operations: { log: { access: { loopback: true } } } };
const hosts = (replace: string, on = port): unknown[] => [
  {
    name: 'real.com', listen: `127.0.0.1:${on}`, origin: { address: [`127.0.0.1:${origin.port}/real`] },
    urlRewrites: [{ pattern: '$URL[^[a-z.]+/r/(.*)]', replace }],
    functions: logs,
  },
  { name: 'face.com', listen: `127.0.0.1:${on}`, mode: { facadeHost: 'real.com' }, origin: { address: [`127.0.0.1:${origin.port}/face`] }, functions: logs },
];
const extra = { functions: { operations: { log: { meta: { dir: 'logs' } } } } };
const server = await startServer(hosts('/rewritten/#1'), { extra });
t.teardown(async () => { await server.stop(); await origin.stop(); });

const get = async (p: string, host: string): Promise<{ status: number; body: string }> => {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host } });
  return { status: r.statusCode, body: await r.body.text() };
};

t.test('a facade request is served by the named host: its origin and its rewrites', async (t) => {
  t.equal((await get('/x', 'face.com')).body, 'origin:GET /real/x');
  t.equal(origin.seen.at(-1)!.headers.host, `real.com:${origin.port}`);
  t.equal((await get('/r/1', 'face.com')).body, 'origin:GET /real/rewritten/1');
  t.equal(origin.seen.filter((s) => s.url.startsWith('/face')).length, 0, 'the facade\'s own origin is never asked');
});

t.test('the facade shares the named host\'s cache', async (t) => {
  t.equal((await get('/obj', 'face.com')).body, 'obj');
  t.equal((await get('/obj', 'real.com')).body, 'obj');
  t.equal(origin.count('/real/obj'), 1);
});

t.test('statistics and access log lines stay with the facade', async (t) => {
  const metrics = (): Promise<string> => fetch(`http://127.0.0.1:${server.apiPort}/metrics`).then((r) => r.text());
  const value = (s: string, vhost: string): number => Number(new RegExp(`^svc_client_requests_total\\{vhost="${vhost}"\\} (\\d+)$`, 'm').exec(s)?.[1] ?? -1);
  const m = await pollUntil(metrics, (s) => value(s, 'face.com') === 3 && value(s, 'real.com') === 1);
  t.equal(value(m, 'face.com'), 3, 'the three facade requests');
  t.equal(value(m, 'real.com'), 1, 'only the request sent to real.com itself');
  t.match(m, /svc_url_rewrites_total\{vhost="face.com"\} 1\n/, 'the rewrite is counted for the facade');
  const file = (h: string): string => path.join(server.dir, 'logs', h, 'access.log');
  const read = (h: string): string => (fs.existsSync(file(h)) ? fs.readFileSync(file(h), 'utf8') : '');
  const entries = (h: string): string[] => read(h).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  await pollUntil(async () => read('face.com') + read('real.com'), () => entries('face.com').length === 3 && entries('real.com').length === 1);
  const face = read('face.com');
  t.match(face, / \/x /);
  t.match(face, / \/r\/1 /);
  t.equal(entries('real.com').length, 1, 'real.com logged only its own request');
  t.equal(entries('face.com').length, 3);
  t.ok(entries('face.com').every((l) => / face\.com face\.com$/.test(l)), 'x-vhost is the facade');
});

t.test('a reload recompiles the rules the facade runs', async (t) => {
  const before = server.logs.filter((l) => l.includes('setting reloaded')).length;
  await writeSetting(server.dir, baseSetting(hosts('/reloaded/#1'), server.basePort, { extra }, server.apiPort));
  server.signal('SIGHUP');
  t.ok(await waitFor(() => server.logs.filter((l) => l.includes('setting reloaded')).length > before), 'reloaded');
  t.equal((await get('/r/2', 'face.com')).body, 'origin:GET /real/reloaded/2');
});

t.test('with hash balance a miss handed to its owner worker stays the facade\'s', async (t) => {
  const hashedPort = await freePort();
  const hashed = await startServer(hosts('/rewritten/#1', hashedPort), { extra, workers: 2, balance: 'hash' });
  t.teardown(() => hashed.stop());
  const metrics = (): Promise<string> => fetch(`http://127.0.0.1:${hashed.apiPort}/metrics`).then((r) => r.text());
  const value = (s: string, name: string, vhost: string): number => Number(new RegExp(`^${name}\\{vhost="${vhost}"\\} (\\d+)$`, 'm').exec(s)?.[1] ?? -1);
  // Twenty URLs: some are owned by the other worker (all on one worker: 2 in a million).
  for (let i = 0; i < 20; i++) {
    const r = await request(`http://127.0.0.1:${hashedPort}/h${i}`, { headers: { host: 'face.com' } });
    t.equal(await r.body.text(), `origin:GET /real/h${i}`);
  }
  // Origin exchanges are counted when they end, after the answers: wait for both.
  const m = await pollUntil(metrics, (s) => value(s, 'svc_client_requests_total', 'face.com') === 20 && value(s, 'svc_origin_requests_total', 'face.com') === 20);
  t.equal(value(m, 'svc_client_requests_total', 'face.com'), 20);
  t.ok(value(m, 'svc_client_handed_off_total', 'face.com') > 0, 'some were handed off');
  t.equal(value(m, 'svc_client_requests_total', 'real.com'), 0);
  t.equal(value(m, 'svc_origin_requests_total', 'real.com'), 0, 'the owners fetched for the facade');
  t.equal(value(m, 'svc_origin_requests_total', 'face.com'), 20);
});
