// Black-box: hosting[].fallbacks through the real server, two scripted origins that record what
// they received, and the access log read from its file: each phase, resCodes (exact, 5xx, fail),
// $URL captures, $HEADER, $RESHEADER, routing to the same host and to another, every serviceCode
// form and the codes it never replaces, x-fallback, and document 2's redirect recipe.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { SVC_FIELDS } from '../../lib/log/access/forms.js';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const main = await new TestOrigin().start();
const backup = await new TestOrigin().start();
const reply = (status: number, body: string, headers: Record<string, string> = {}) => (_q: unknown, res: import('node:http').ServerResponse) => {
  res.writeHead(status, { 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
};
main.on('/img/a.png', reply(404, 'missing', { 'cache-control': 'no-store' }));
main.on('/default/a.png', reply(200, 'default image', { 'cache-control': 'no-store' }));
main.on('/api/v1', reply(503, 'down', { 'cache-control': 'no-store' }));
main.on('/chain', reply(404, 'chain 1', { 'cache-control': 'no-store' }));
main.on('/chain2', reply(500, 'chain 2', { 'cache-control': 'no-store' }));
main.on('/chain3', reply(200, 'chain 3', { 'cache-control': 'no-store' }));
main.on('/empty', reply(404, 'x', { 'cache-control': 'no-store' }));
main.on('/gone', reply(410, 'gone', { 'cache-control': 'max-age=60' }));
main.on('/neg', reply(404, 'cached 404', { 'cache-control': 'max-age=60' }));
main.on('/neg-default', reply(200, 'neg default', { 'cache-control': 'no-store' }));
main.on('/broken', reply(200, 'broken', { 'content-type': 'text/x-broken', 'cache-control': 'no-store' }));
main.on('/fixed', reply(200, 'fixed', { 'content-type': 'text/plain', 'cache-control': 'no-store' }));
main.on('/go/page', reply(404, 'no page', { 'cache-control': 'no-store' }));
backup.on('/api/v1', reply(200, 'backup api', { 'cache-control': 'no-store' }));
backup.on('/down/x', reply(200, 'backup of a dead origin', { 'cache-control': 'no-store' }));
backup.on('/nothing', reply(204, '', { 'cache-control': 'no-store' }));

const port = await freePort();
const dead = await freePort();
const logs = { operations: { log: { access: { loopback: true, form: 'svc' } } } };
const server = await startServer([
  {
    name: 'main.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${main.port}`] },
    fallbacks: {
      enable: true,
      matchingList: [
        { resCodes: ['404'], pattern: '$URL[^main\\.test/img/(.*)]', replace: '/default/#1' },
        { phase: 'backend', resCodes: ['5xx'], pattern: '$URL[^main\\.test/api/(.*)]', replace: 'backup.test/api/#1', serviceCode: '#FIRST' },
        { resCodes: [404], pattern: '$URLMATCH[^main\\.test/chain$]', replace: '/chain2' },
        { resCodes: [500], pattern: '$URLMATCH[^main\\.test/chain2$]', replace: '/chain3', serviceCode: '#BEFORE' },
        { resCodes: ['404'], pattern: '$URLMATCH[/empty$]', replace: 'backup.test/nothing', serviceCode: 503 },
        { phase: 'backend', resCodes: ['410'], pattern: '$HEADER[X-Want-Fallback]', replace: '/default/a.png' },
        { resCodes: ['404'], pattern: '$URLMATCH[/neg$]&$HEADER[X-Want-Fallback]', replace: '/neg-default' },
        { resCodes: ['2xx'], pattern: '$RESHEADER[Content-Type: text/x-broken*]', replace: '/fixed' },
        { resCodes: ['404'], pattern: '$URL[^main\\.test/go/(.*)]', replace: '/_moved_/#1' },
      ],
    },
    functions: {
      ...logs,
      network: { http: { frontEnd: { accessControl: { enable: true, matchingList: [
        { pattern: '$URL[^main\\.test/_moved_/(.*)]', action: 'redirect', location: 'https://www.example.com/#1', status: 302 },
      ] } } } },
    },
  },
  {
    name: 'dead.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`] },
    fallbacks: { enable: true, matchingList: [{ resCodes: ['fail'], pattern: '$URL[^dead\\.test/(.*)]', replace: 'backup.test/down/#1', serviceCode: 200 }] },
    functions: logs,
  },
  { name: 'backup.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${backup.port}`] }, functions: logs },
], { extra: { meta: { settingTrace: { enable: true, keyword: 'show-rules' } }, functions: { operations: { log: { meta: { dir: 'logs' } } } } } });
t.teardown(async () => { await server.stop(); await main.stop(); await backup.stop(); fs.rmSync(server.dir, { recursive: true, force: true }); });

async function get(host: string, p: string, headers: Record<string, string> = {}) {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host, ...headers } });
  return { status: r.statusCode, headers: r.headers, body: await r.body.text() };
}
const count = (o: TestOrigin, p: string) => o.seen.filter((s) => s.url === p).length;
const accessLines = (h: string): string[] => {
  const f = path.join(server.dir, 'logs', h, 'access.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#')) : [];
};
const field = (line: string, name: string): string => line.split(' ')[SVC_FIELDS.indexOf(name as (typeof SVC_FIELDS)[number])]!;

t.test('a frontend fallback on 404 serves the replacement URL of the same host, with the URL captures', async (t) => {
  const r = await get('main.test', '/img/a.png');
  t.equal(r.status, 200, '#LAST: the status of the last answer');
  t.equal(r.body, 'default image');
  t.equal(count(main, '/img/a.png'), 1);
  t.equal(count(main, '/default/a.png'), 1);
});

t.test('a backend fallback on 5xx routes to another host, and #FIRST sends the first status with the last body', async (t) => {
  const r = await get('main.test', '/api/v1');
  t.equal(r.status, 503);
  t.equal(r.body, 'backup api');
  t.equal(count(backup, '/api/v1'), 1);
});

t.test('fail: an origin that cannot be reached falls back, and a numeric serviceCode is the status sent', async (t) => {
  const r = await get('dead.test', '/x');
  t.equal(r.status, 200);
  t.equal(r.body, 'backup of a dead origin');
});

t.test('fallbacks chain, and #BEFORE sends the status of the answer before the last one', async (t) => {
  const r = await get('main.test', '/chain');
  t.equal(r.status, 500);
  t.equal(r.body, 'chain 3');
});

t.test('a serviceCode is not applied to a final 204', async (t) => {
  const r = await get('main.test', '/empty');
  t.equal(r.status, 204);
});

t.test('a backend fallback does not act on an answer from the cache; a frontend one does', async (t) => {
  t.equal((await get('main.test', '/gone')).status, 410, 'stored: the request did not match');
  const cached = await get('main.test', '/gone', { 'x-want-fallback': '1' });
  t.equal(cached.status, 410);
  t.equal(cached.headers['x-cache'], 'TCP_NEGATIVE_HIT');
  t.equal(count(main, '/gone'), 1);
  t.equal((await get('main.test', '/neg')).status, 404);
  const front = await get('main.test', '/neg', { 'x-want-fallback': '1' });
  t.equal(front.status, 200);
  t.equal(front.body, 'neg default');
  t.equal(count(main, '/neg'), 1, 'the 404 came from the cache');
});

t.test('$RESHEADER matches a field of the answer', async (t) => {
  const r = await get('main.test', '/broken');
  t.equal(r.body, 'fixed');
  t.equal(r.headers['content-type'], 'text/plain');
});

t.test('the redirect recipe: a fallback routes to a marker path that access control answers with a redirect', async (t) => {
  const r = await get('main.test', '/go/page');
  t.equal(r.status, 302);
  t.equal(r.headers.location, 'https://www.example.com/page');
});

t.test('the access log names the hosts a fallback routed to in x-fallback, in the log of the host that served last', async (t) => {
  await until(() => accessLines('main.test').some((l) => field(l, 'cs-uri-stem') === '/go/page'), 'access lines of main.test');
  await until(() => accessLines('backup.test').length >= 3, 'access lines of backup.test');
  const byUrl = (u: string) => [...accessLines('main.test'), ...accessLines('backup.test')].find((l) => field(l, 'cs-uri-stem') === u)!;
  t.equal(field(byUrl('/api/v1'), 'x-vhost'), 'backup.test');
  t.equal(field(byUrl('/img/a.png'), 'x-fallback'), 'main.test');
  t.equal(field(byUrl('/api/v1'), 'x-fallback'), 'backup.test');
  t.equal(field(byUrl('/chain'), 'x-fallback'), 'main.test+main.test');
  t.equal(field(byUrl('/api/v1'), 'sc-status'), '503');
  t.equal(field(accessLines('main.test').find((l) => field(l, 'cs-uri-stem') === '/gone')!, 'x-fallback'), '-');
  t.equal(field(byUrl('/x'), 'x-fallback'), 'backup.test');
});

t.test('the setting trace names the fallback entry that routed, and the answer it led to', async (t) => {
  const r = await get('main.test', '/img/a.png/show-rules');
  t.equal(r.status, 422);
  const body = JSON.parse(r.body) as { response: { code: number }; trace: { vhost: string; setting: { path: string; matchingList: unknown[] }[] | null }[] };
  t.equal(body.response.code, 200);
  t.match(body.trace[0], { vhost: 'main.test', setting: [{ path: 'hosting.fallbacks', matchingList: [{ resCodes: ['404'], replace: '/default/#1' }] }] });
});
