// Black-box: functions.network.http.frontEnd.accessControl through the real server. Clients
// come from different loopback addresses; a country database the test builds (never a download)
// gives some of them a country. Each action (allow, deny, redirect), the default, captures in
// the location, the statistics (ServiceAccess, ClientHttpReqDenied, TCP_DENIED) and the GeoIP list.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import os from 'node:os';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';
import { buildCountryMmdb } from '../helpers/mmdb.js';

const geoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-geo-'));
fs.writeFileSync(path.join(geoDir, 'country.mmdb'), buildCountryMmdb({ '127.0.0.20/32': 'KR', '127.0.0.30/32': 'JP' }));
const origin = await new TestOrigin().start();
const port = await freePort();
const accessControl = (matchingList: unknown[], extra: Record<string, unknown> = {}) =>
  ({ network: { http: { frontEnd: { accessControl: { enable: true, matchingList, ...extra } } } } });
const server = await startServer([
  {
    name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/a`] },
    functions: accessControl([
      { pattern: '$IP[127.0.0.40-49]', action: 'allow' },
      { pattern: '$IP[127.0.0.32/27]', action: 'deny' },
      { pattern: '$IP[JP]', action: 'deny' },
      { pattern: '$URL[^a\\.com/go/(.*)]', action: 'redirect', location: 'https://#1', status: 301 },
      { pattern: '$URLMATCH[^a\\.com/admin/] & !HEADER[X-Admin: secret]', action: 'deny' },
      { pattern: '$METHOD[DELETE]', action: 'deny' },
    ]),
  },
  {
    // Only Korea may read this one.
    name: 'kr.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/kr`] },
    functions: accessControl([{ pattern: '$IP[KR]', action: 'allow' }], { default: 'deny' }),
  },
  { name: 'open.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/open`] } },
], { extra: { env: { geoip: { path: geoDir } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(geoDir, { recursive: true, force: true }); });

interface Answer { status: number; headers: http.IncomingHttpHeaders; body: string }
function send(p: string, opts: { host?: string; method?: string; headers?: Record<string, string>; from?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, path: p, method: opts.method ?? 'GET', localAddress: opts.from ?? '127.0.0.1',
      headers: { host: opts.host ?? 'a.com', connection: 'close', ...opts.headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('a request no entry matches takes the default (allow)', async (t) => {
  const r = await send('/page');
  t.equal(r.status, 200);
  t.equal(r.body, 'origin:GET /a/page');
});

t.test('deny answers 403 and nothing reaches the origin', async (t) => {
  const before = origin.seen.length;
  const r = await send('/page', { from: '127.0.0.33' });
  t.equal(r.status, 403);
  t.equal(r.headers['cache-control'], 'no-store');
  t.equal(origin.seen.length, before);
});

t.test('the first matching entry decides: an allow before a deny lets the client in', async (t) => {
  // 127.0.0.41 is in 127.0.0.40-49 (allow, first) and in 127.0.0.32/27 (deny, second).
  t.equal((await send('/page', { from: '127.0.0.41' })).status, 200);
  t.equal((await send('/page', { from: '127.0.0.50' })).status, 403, 'only in the /27');
  t.equal((await send('/page', { from: '127.0.0.40' })).status, 200);
});

t.test('a country code in IP[...] uses the GeoIP database', async (t) => {
  t.equal((await send('/page', { from: '127.0.0.30' })).status, 403, 'JP is denied on a.com');
  t.equal((await send('/page', { from: '127.0.0.20' })).status, 200, 'KR is not');
  t.equal((await send('/k', { host: 'kr.com', from: '127.0.0.20' })).body, 'origin:GET /kr/k', 'kr.com: KR allowed');
  t.equal((await send('/k', { host: 'kr.com', from: '127.0.0.30' })).status, 403, 'kr.com: JP falls to default deny');
  t.equal((await send('/k', { host: 'kr.com' })).status, 403, 'kr.com: an address the database does not know is no country');
});

t.test('redirect answers with the location built from the URL captures', async (t) => {
  const r = await send('/go/www.example.org/x?y=1');
  t.equal(r.status, 301);
  t.equal(r.headers.location, 'https://www.example.org/x?y=1');
  t.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)));
});

t.test('a negated HEADER condition and a METHOD condition', async (t) => {
  t.equal((await send('/admin/panel')).status, 403);
  t.equal((await send('/admin/panel', { headers: { 'x-admin': 'secret' } })).status, 200);
  t.equal((await send('/thing', { method: 'DELETE' })).status, 403);
});

t.test('a host without access control is not checked', async (t) => {
  t.equal((await send('/x', { host: 'open.com', from: '127.0.0.33' })).status, 200);
});

t.test('denials are counted: TCP_DENIED, ServiceAccess Allow/Deny per host', async (t) => {
  const metrics = (): Promise<string> => fetch(`http://127.0.0.1:${server.apiPort}/metrics`).then((r) => r.text());
  const value = (s: string, name: string, labels: string): number => Number(new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(s)?.[1] ?? -1);
  // a.com: allowed /page x5 (default, .41, .40, .20, admin with header) = 5; denied .33, .50, .30,
  // /admin, DELETE = 5 and the redirect = 6. kr.com: 1 allowed, 2 denied.
  const m = await pollUntil(metrics, (s) => value(s, 'svc_access_control_total', 'vhost="kr.com",decision="deny"') === 2 &&
    value(s, 'svc_access_control_total', 'vhost="a.com",decision="deny"') === 6);
  t.equal(value(m, 'svc_access_control_total', 'vhost="a.com",decision="allow"'), 5);
  t.equal(value(m, 'svc_access_control_total', 'vhost="a.com",decision="deny"'), 6);
  t.equal(value(m, 'svc_access_control_total', 'vhost="kr.com",decision="allow"'), 1);
  t.equal(value(m, 'svc_client_cache_results_total', 'vhost="a.com",result="TCP_DENIED"'), 5, 'the redirect is not a TCP_DENIED');
  t.equal(value(m, 'svc_access_control_total', 'vhost="open.com",decision="deny"'), 0);
});

t.test('the statistics documents show ServiceAccess, URLRewrite and ClientHttpReqDenied', async (t) => {
  type Doc = { Host: { System: { ServiceAccess: { Allow: number; Deny: number }; URLRewrite: number }; VirtualHost: { Name: string; ClientHttpReqDenied: number; ClientHttpReqDeniedSum: number }[] } };
  const doc = await pollUntil(async () => (await fetch(`http://127.0.0.1:${server.apiPort}/monitoring/average?min=5`)).json() as Promise<Doc>,
    (d) => d.Host.VirtualHost.find((v) => v.Name === 'a.com')?.ClientHttpReqDeniedSum === 5);
  const a = doc.Host.VirtualHost.find((v) => v.Name === 'a.com')!;
  t.equal(a.ClientHttpReqDeniedSum, 5);
  t.ok(a.ClientHttpReqDenied > 0, 'a per-second average over the window');
  t.ok(doc.Host.System.ServiceAccess.Allow > 0 && doc.Host.System.ServiceAccess.Deny > 0);
  t.equal(doc.Host.System.URLRewrite, 0, 'no rewrite rules here');
});

t.test('/monitoring/geoiplist lists the database the conditions read', async (t) => {
  const r = await fetch(`http://127.0.0.1:${server.apiPort}/monitoring/geoiplist`);
  const body = await r.json() as { result: { path: string; files: { file: string }[] } };
  t.equal(body.result.path, geoDir);
  t.same(body.result.files.map((f) => f.file), ['country.mmdb']);
});
