// Black-box: header edits (frontEnd.modify, backEnd.modify) and bypass (by pattern, instant,
// no-cache request) through the real server, with a scripted origin that records what it
// received, curl as a client, the access and origin logs read from their files and the
// UrlBypass counter read from /metrics.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { SVC_FIELDS } from '../../lib/log/access/forms.js';
import { ORIGIN_FIELDS } from '../../lib/log/origin/line.js';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil, until } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
let n = 0;
origin.otherwise((req, res) => {
  n++;
  const body = `${req.url} #${n}`;
  res.writeHead(200, { 'cache-control': 'max-age=600', server: 'origin-httpd', 'set-cookie': 'o=1', 'x-origin': 'yes', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
origin.on('/tenant', (_req, res) => {
  n++;
  const body = `tenant #${n}`;
  res.writeHead(200, { 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const logs = { operations: { log: { access: { loopback: true, form: 'svc' }, origin: { loopback: true } } } };
const server = await startServer([
  {
    name: 'edit.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: {
      ...logs,
      network: {
        http: {
          frontEnd: {
            modify: {
              matchingList: [
                {
                  pattern: '$URL[^edit\\.test/api/]',
                  headers: [{ key: 'X-Edge', value: '1', mode: 'set' }, { key: 'Cookie', mode: 'unset' }],
                  responseHeaders: [{ key: 'X-Served-By', value: 'edge', mode: 'add' }, { key: 'Server', mode: 'unset' }],
                },
                { headers: [{ key: 'X-Trace', value: 'front', mode: 'append' }] },
              ],
            },
          },
          backEnd: {
            modify: {
              matchingList: [
                {
                  pattern: '$HEADER[X-Tenant: gold]',
                  headers: [{ key: 'X-Priority', value: 'high', mode: 'set' }],
                  responseHeaders: [{ key: 'Cache-Control', value: 'max-age=600', mode: 'set' }],
                },
                { headers: [{ key: 'User-Agent', mode: 'rewrite', match: '^curl/(.*)$', value: 'edge-curl/#1' }] },
              ],
            },
          },
        },
      },
    },
  },
  {
    name: 'bp.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: {
      ...logs,
      network: {
        http: {
          frontEnd: {
            bypass: {
              noCacheRequest: { enable: true },
              matchingList: [{ pattern: '$URLMATCH[^bp\\.test/live/]' }, { pattern: '$HEADER[X-Debug]', instant: true }],
            },
          },
        },
      },
    },
  },
], {
  extra: {
    meta: { settingTrace: { enable: true, keyword: 'show-rules' } },
    functions: { operations: { log: { meta: { dir: 'logs' } } }, network: { http: { frontEnd: { http2: { cleartext: true } } } } },
  },
});
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(server.dir, { recursive: true, force: true }); });

async function get(host: string, p: string, headers: Record<string, string> = {}) {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host, ...headers } });
  return { status: r.statusCode, headers: r.headers, body: await r.body.text() };
}
const last = (p: string) => origin.seen.filter((s) => s.url === p).at(-1)!;
const fetched = (p: string) => origin.seen.filter((s) => s.url === p).length;
const entries = (h: string, kind: string): string[] => {
  const f = path.join(server.dir, 'logs', h, `${kind}.log`);
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#')) : [];
};
const field = (line: string, fields: readonly string[], name: string): string => line.split(' ')[fields.indexOf(name)]!;

t.test('front request edits reach the origin and the cache; front response edits reach every answer, hits too', async (t) => {
  const miss = await get('edit.test', '/api/a', { cookie: 'sid=1', 'x-trace': 'client' });
  const seen = last('/api/a');
  t.equal(seen.headers['x-edge'], '1');
  t.equal(seen.headers.cookie, undefined, 'Cookie unset before the origin');
  t.equal(seen.headers['x-trace'], 'client, front', 'append adds to the client value');
  t.equal(miss.headers['x-served-by'], 'edge');
  t.equal(miss.headers.server, undefined);
  t.equal(miss.headers['x-origin'], 'yes', 'fields no rule names pass unchanged');
  const hit = await get('edit.test', '/api/a');
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.equal(hit.headers['x-served-by'], 'edge');
  t.equal(hit.headers.server, undefined);
  const other = await get('edit.test', '/other', { cookie: 'sid=1' });
  t.equal(last('/other').headers.cookie, 'sid=1', 'a request the pattern does not match keeps its fields');
  t.equal(last('/other').headers['x-trace'], 'front', 'append creates an absent field');
  t.equal(other.headers['x-served-by'], undefined);
  t.equal(other.headers.server, 'origin-httpd');
});

t.test('front response edits apply to an HTTP/2 answer too (curl, h2c)', async (t) => {
  const { stdout } = await promisify(execFile)('curl', ['-s', '--http2-prior-knowledge', '-D', '-', '-o', '/dev/null', '-H', 'Host: edit.test', `http://127.0.0.1:${port}/api/h2`]);
  t.match(stdout, /^HTTP\/2 200/);
  t.match(stdout, /\r\nx-served-by: edge\r\n/);
  t.notMatch(stdout, /\r\nserver:/i);
  t.equal(last('/api/h2').headers['x-edge'], '1');
});

t.test('back edits change the origin request and the origin answer before it is stored', async (t) => {
  const a = await get('edit.test', '/tenant', { 'x-tenant': 'gold' });
  t.equal(last('/tenant').headers['x-priority'], 'high');
  t.equal(a.headers['cache-control'], 'max-age=600');
  const b = await get('edit.test', '/tenant', { 'x-tenant': 'gold' });
  t.equal(b.headers['x-cache'], 'TCP_HIT', 'stored under the edited Cache-Control');
  t.equal(fetched('/tenant'), 1);
  await get('edit.test', '/tenant?silver', { 'x-tenant': 'silver' });
  t.equal(last('/tenant?silver').headers['x-priority'], undefined);
});

t.test('a rewrite edit replaces what its match finds, with the captures', async (t) => {
  // Asynchronous: the scripted origin answers from this process.
  await promisify(execFile)('curl', ['-s', '-o', '/dev/null', '-A', 'curl/8.1.2', '-H', 'Host: edit.test', `http://127.0.0.1:${port}/ua`]);
  t.equal(last('/ua').headers['user-agent'], 'edge-curl/8.1.2');
});

t.test('a request matching a bypass pattern goes to the origin every time and is never stored', async (t) => {
  const a = await get('bp.test', '/live/feed');
  const b = await get('bp.test', '/live/feed');
  t.equal(fetched('/live/feed'), 2);
  t.not(a.body, b.body);
  t.equal(b.headers['x-cache'], undefined, 'no cache answered it');
  t.match(String(last('/live/feed').headers.via), /svc/, 'a plain bypass still adds Via');
});

t.test('an instant bypass forwards the request as sent and the answer with every field', async (t) => {
  const r = await get('bp.test', '/static/x', { 'x-debug': '1' });
  const seen = last('/static/x');
  t.equal(seen.headers.via, undefined);
  t.equal(seen.headers['x-forwarded-for'], undefined);
  t.equal(r.headers.via, undefined);
  t.equal(r.headers['set-cookie'], 'o=1');
  await get('bp.test', '/static/x');
  t.equal(fetched('/static/x'), 2, 'the instant answer was not stored');
});

t.test('a no-cache request bypasses: the origin answers it and the stored copy is left as it was', async (t) => {
  const first = await get('bp.test', '/n');
  t.equal((await get('bp.test', '/n')).headers['x-cache'], 'TCP_HIT');
  const fresh = await get('bp.test', '/n', { 'cache-control': 'no-cache' });
  t.not(fresh.body, first.body);
  const after = await get('bp.test', '/n');
  t.equal(after.headers['x-cache'], 'TCP_HIT');
  t.equal(after.body, first.body, 'the bypassed answer did not replace the stored one');
  t.equal(fetched('/n'), 2);
});

t.test('bypasses are logged Bypass / Bypass/instant and counted in UrlBypass; a POST bypass by method is logged, not counted', async (t) => {
  const post = await request(`http://127.0.0.1:${port}/post`, { method: 'POST', body: 'x', headers: { host: 'bp.test' } });
  t.equal(post.statusCode, 200);
  await post.body.text();
  await until(() => entries('bp.test', 'access').length >= 9 && entries('bp.test', 'origin').length >= 6, 'bp.test log lines');
  const info = entries('bp.test', 'access').map((l) => [field(l, SVC_FIELDS, 'cs-uri-stem'), field(l, SVC_FIELDS, 'sc-resinfo')]);
  t.same(info.filter(([u]) => u === '/live/feed').map(([, i]) => i), ['Bypass', 'Bypass']);
  t.same(info.filter(([u]) => u === '/static/x').map(([, i]) => i), ['Bypass/instant', '-']);
  t.same(info.filter(([u]) => u === '/n').map(([, i]) => i), ['-', '-', 'Bypass', '-']);
  t.same(info.filter(([u]) => u === '/post').map(([, i]) => i), ['Bypass']);
  const reqinfo = entries('bp.test', 'origin').map((l) => [field(l, ORIGIN_FIELDS, 'cs-uri'), field(l, ORIGIN_FIELDS, 'cs-reqinfo')]);
  t.ok(reqinfo.some(([u, i]) => u === '/static/x' && i === 'Bypass/instant'), JSON.stringify(reqinfo));
  t.ok(reqinfo.some(([u, i]) => u === '/live/feed' && i === 'Bypass'));
  const metrics = await pollUntil(async () => (await (await request(`http://127.0.0.1:${server.apiPort}/metrics`)).body.text()),
    (m) => m.includes('svc_client_bypassed_total{vhost="bp.test"} 4'));
  t.match(metrics, 'svc_client_bypassed_total{vhost="bp.test"} 4');
  t.match(metrics, 'svc_client_bypassed_total{vhost="edit.test"} 0');
});

t.test('the setting trace names the modify and bypass entries a request matched', async (t) => {
  const edit = await get('edit.test', '/api/t/show-rules');
  t.equal(edit.status, 422);
  const body = JSON.parse(edit.body) as { trace: { vhost: string; setting: { path: string; matchingList: unknown[] }[] | null }[] };
  const paths = body.trace[0]!.setting!.map((s) => s.path);
  t.ok(paths.includes('functions.network.http.frontEnd.modify'), JSON.stringify(body.trace));
  t.ok(paths.includes('functions.network.http.backEnd.modify'));
  const front = body.trace[0]!.setting!.find((s) => s.path === 'functions.network.http.frontEnd.modify')!;
  t.match(front.matchingList, [{ pattern: '$URL[^edit\\.test/api/]' }, { headers: [{ key: 'X-Trace' }] }]);
  const bp = JSON.parse((await get('bp.test', '/live/x/show-rules')).body) as typeof body;
  t.match(bp.trace[0]!.setting, [{ path: 'functions.network.http.frontEnd.bypass', matchingList: [{ pattern: '$URLMATCH[^bp\\.test/live/]' }] }]);
});
