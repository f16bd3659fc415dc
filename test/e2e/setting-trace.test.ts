// Black-box: meta.settingTrace. A request whose path ends in the keyword is served without it
// (the origin sees the plain path, the cache keeps the object) but answered 422 with the JSON of
// document 2: the answer it would have had and the rules that matched, per virtual host.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
origin.on('/t/obj', (_q, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=600', 'x-from': 'origin', 'content-length': 3 });
  res.end('obj');
});
const port = await freePort();
const rewriteOld = { pattern: '$URL[^t\\.com/old/(.*)]', replace: '/new/#1' };
const rewriteAway = { pattern: '$URL[^t\\.com/to-u/(.*)]', replace: 'u.com/#1' };
const denySecret = { pattern: '$URLMATCH[/secret]', action: 'deny' };
const allowGet = { pattern: '$METHOD[GET]', action: 'allow' };
const server = await startServer([
  {
    name: 't.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/t`] },
    urlRewrites: [rewriteOld, rewriteAway],
    functions: { network: { http: { frontEnd: { accessControl: { enable: true, matchingList: [denySecret, allowGet] } } } } },
  },
  { name: 'u.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/u`] } },
], { extra: { meta: { settingTrace: { enable: true } }, functions: { network: { http: { frontEnd: { http2: { cleartext: true } } } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); });

interface TraceBody {
  sessionId: number; 'x-ctx-id': string; cachehit: string;
  response: { code: number; headers: { key: string; value: string }[] };
  trace: { vhost: string; setting: { path: string; matchingList: unknown[] }[] | null }[];
}
async function get(p: string, host = 't.com'): Promise<{ status: number; type: string | undefined; body: string }> {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host } });
  return { status: r.statusCode, type: r.headers['content-type'] as string | undefined, body: await r.body.text() };
}

t.test('the keyword is taken off, the request served, and the answer is 422 with the trace', async (t) => {
  const r = await get('/old/x/_trace_?q=1');
  t.equal(r.status, 422);
  t.equal(r.type, 'application/json');
  t.equal(origin.seen.at(-1)!.url, '/t/new/x?q=1', 'the origin got the rewritten path without the keyword');
  const b = JSON.parse(r.body) as TraceBody;
  t.ok(Number.isInteger(b.sessionId));
  t.match(b['x-ctx-id'], /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  t.equal(b.cachehit, 'TCP_MISS');
  t.equal(b.response.code, 200);
  t.ok(b.response.headers.some((h) => h.key === 'content-type' && h.value === 'text/plain'), 'the fields the answer had');
  t.strictSame(b.trace, [{
    vhost: 't.com',
    setting: [
      { path: 'hosting.urlRewrites', matchingList: [{ ...rewriteOld, caseSensitive: true }] },
      { path: 'functions.network.http.frontEnd.accessControl', matchingList: [allowGet] },
    ],
  }]);
});

t.test('the traced request is processed normally: the object is cached and a second trace shows the hit', async (t) => {
  const first = JSON.parse((await get('/obj/_trace_')).body) as TraceBody;
  t.equal(first.cachehit, 'TCP_MISS');
  t.ok(first.response.headers.some((h) => h.key === 'x-from' && h.value === 'origin'));
  const second = JSON.parse((await get('/obj/_trace_')).body) as TraceBody;
  t.equal(second.cachehit, 'TCP_HIT');
  t.equal(second.response.code, 200);
  t.ok(second.response.headers.some((h) => h.key === 'x-from' && h.value === 'origin'), 'a hit shows its stored fields');
  t.ok(second.response.headers.some((h) => h.key === 'age'), 'and the fields the cache adds');
  const plain = await get('/obj');
  t.equal(plain.status, 200, 'without the keyword the answer is the object');
  t.equal(plain.body, 'obj');
  t.equal(origin.count('/t/obj'), 1, 'one origin fetch for the three requests');
});

t.test('a denied request shows the 403 it would have had', async (t) => {
  const b = JSON.parse((await get('/secret/_trace_')).body) as TraceBody;
  t.equal(b.response.code, 403);
  t.equal(b.cachehit, 'TCP_DENIED');
  t.strictSame(b.trace[0]!.setting, [{ path: 'functions.network.http.frontEnd.accessControl', matchingList: [denySecret] }]);
});

t.test('a rewrite to another host lists both hosts, the second without matches', async (t) => {
  const b = JSON.parse((await get('/to-u/page/_trace_')).body) as TraceBody;
  t.equal(origin.seen.at(-1)!.url, '/u/page');
  t.strictSame(b.trace.map((i) => i.vhost), ['t.com', 'u.com']);
  t.equal(b.trace[1]!.setting, null);
});

t.test('a host without rules is traced too, with no setting matched', async (t) => {
  const b = JSON.parse((await get('/_trace_', 'u.com')).body) as TraceBody;
  t.equal(origin.seen.at(-1)!.url, '/u/', 'the keyword alone leaves /');
  t.strictSame(b.trace, [{ vhost: 'u.com', setting: null }]);
});

t.test('only a path that ends in the keyword is traced', async (t) => {
  t.equal((await get('/x_trace_', 'u.com')).status, 200);
  t.equal((await get('/_trace_/x', 'u.com')).status, 200);
});

t.test('the default keyword gets a warning in the info log at load', async (t) => {
  const file = path.join(server.dir, 'svclog', 'info.log');
  const text = await pollUntil(async () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''), (s) => s.includes('_trace_'));
  t.match(text, /warning: meta\.settingTrace is enabled with the default keyword _trace_/);
});

t.test('an HTTP/2 request is traced the same way (curl, h2c prior knowledge)', async (t) => {
  const out = await new Promise<string>((resolve, reject) => {
    execFile('curl', ['-sS', '-i', '--max-time', '10', '--http2-prior-knowledge', '--resolve', `t.com:${port}:127.0.0.1`, `http://t.com:${port}/obj/_trace_`],
      (err, stdout) => (err === null ? resolve(stdout) : reject(err)));
  });
  t.match(out, /^HTTP\/2 422 ?\r\n/);
  const b = JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)) as TraceBody;
  t.equal(b.response.code, 200);
  t.equal(b.cachehit, 'TCP_HIT');
  t.ok(b.response.headers.some((h) => h.key === 'x-from' && h.value === 'origin'), 'the stored fields of the hit');
  t.strictSame(b.trace.map((i) => i.vhost), ['t.com']);
});
