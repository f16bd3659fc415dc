// Black-box: functions.hook through the real server, a scripted hook server and a scripted
// origin on loopback. Each kind of answer of document 2 (continue, own answer, header edits,
// cacheKey, cacheTtl, cacheResult, originRequest, userData, a POST; vhost: hook-bounds.test.ts) and every error path
// (hook status not 200: 403, svchook1: 510, method change: 405, hook down or slow: 403) are
// asserted on what the client got, what the origin received, the access and origin log lines,
// and what was cached under which key (fileinfo, purge).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

interface HookCall { doc: Record<string, unknown>; headers: http.IncomingHttpHeaders; path: string }
const calls: HookCall[] = [];
let releaseSlow: () => void = () => undefined;
const slow = new Promise<void>((r) => { releaseSlow = r; });

/** The hook's answer per client path (the first word of the request line in `message`). */
function answer(p: string, doc: Record<string, unknown>): { status?: number; body: unknown; headers?: Record<string, string> } | 'hang' {
  const cont = { response: { code: 100 } };
  if (p === '/nolog') return { body: cont, headers: { 'x-svcx-directive': 'NoLog' } };
  if (p.startsWith('/continue/')) return { body: cont };
  if (p === '/deny') return { body: { response: { code: 401, body: 'no entry', headers: [{ key: 'WWW-Authenticate', value: 'Basic realm="x"' }] } } };
  if (p.startsWith('/key/')) {
    return { body: { ...cont, cacheKey: '/shared/k1', userData: { tier: 'gold plan' },
      request: { headers: [{ key: 'X-User', value: 'u1', mode: 'set' }, { key: 'X-Remove', mode: 'unset' }, { key: 'X-List', value: 'b', mode: 'append' }] } } };
  }
  if (p === '/origin') {
    return { body: { ...cont, cacheKey: '/o-key', originRequest: { method: 'GET', url: '/real?x=1',
      headers: [{ key: 'X-Extra', value: '1' }, { key: 'User-Agent', value: 'hook' }, { key: 'Host', value: 'evil.example' }] } } };
  }
  if (p === '/switch') return { body: { ...cont, cacheKey: '/sw', originRequest: { method: 'POST', url: '/sw', body: 'b' } } };
  if (p === '/nokey') return { body: { ...cont, cacheKey: null } };
  if (p === '/ttl') return { body: { ...cont, cacheKey: '/ttl', cacheTtl: 5 } };
  if (p === '/result') return { body: { ...cont, cacheKey: '/result', cacheResult: 'TCP_REFRESH_HIT' } };
  if (p === '/err510') return { body: { name: 'svchook1', code: 500, body: 'db down' } };
  if (p === '/status500') return { status: 500, body: { response: { code: 100 } } };
  if (p === '/notjson') return { body: 'not json' };
  if (p === '/slow') return 'hang';
  if (p === '/head') return { body: { ...cont, cacheKey: '/head-key' } };
  if (p === '/api') {
    // Every body of the same "q" maps to one key; the origin gets the normalised body.
    const q = JSON.parse(String(doc.body)).q as string;
    return { body: { ...cont, cacheKey: `/api/${q}`, originRequest: { method: 'POST', url: '/api', body: `q=${q}` } } };
  }
  if (p.startsWith('/co/')) return { body: { ...cont, cacheKey: '/co' } };
  if (p === '/probe') return { body: { response: { code: 204 } } };
  if (p.startsWith('/pass/')) {
    return { body: { ...cont, request: { headers: [{ key: 'X-From-Hook', value: 'h' }] },
      originRequest: { method: 'GET', url: p, headers: [{ key: 'X-Debug', value: 'hook' }] } } };
  }
  return { body: cont };
}

const hook = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const doc = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
    const p = String(doc.message).split(' ')[1]!.split('?')[0]!;
    calls.push({ doc, headers: req.headers, path: p });
    const a = answer(p, doc);
    if (a === 'hang') { void slow.then(() => res.end()); return; }
    const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
    res.writeHead(a.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...a.headers });
    res.end(text);
  });
});
await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook/v1?x=1`;

let coRelease: () => void = () => undefined;
const coGate = new Promise<void>((r) => { coRelease = r; });
const origin = await new TestOrigin().start();
let n = 0;
origin.otherwise((req, res) => {
  n++;
  const body = `${req.method} ${req.url} #${n} ${req.body.toString()}`;
  const send = (): void => {
    res.writeHead(200, { 'cache-control': 'max-age=600', 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  if (req.url === '/co') void coGate.then(send);
  else send();
});
const dead = await freePort();
const port = await freePort();

const FORMAT = '%m %U %s %S %F %{cacheKey}N %{userData.tier}N %{originRequest.headers[x-extra]}N %E';
const logs = (access: Record<string, unknown> = {}) => ({ access: { loopback: true, ...access }, origin: { loopback: true } });
const postCaching = {
  http: { frontEnd: { bypass: { postMethod: { enable: false } } } },
  cache: { cachingKey: { postMethod: { enable: true, bodySensitive: true, bodyContentLengthMax: 1024 } } },
};
const bypassing = { http: { frontEnd: { bypass: { matchingList: [
  { pattern: '$URL[/pass/plain]' }, { pattern: '$URL[/pass/instant]', instant: true }] } } } };
const hookOf = (extra: Record<string, unknown> = {}) => ({
  enable: true, path: hookUrl, session: { receiveTimeout: 1, param: '{"site":"a b","n":1}' }, ...extra,
});
const server = await startServer([
  { name: 'hook.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { hook: hookOf(), network: postCaching, operations: { log: logs({ form: 'custom', format: FORMAT }) } } },
  { name: 'some.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { hook: hookOf({ matchingList: [{ pattern: '$URL[^/hooked/]' }] }), operations: { log: logs({ form: 'svc' }) } } },
  { name: 'down.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { hook: { enable: true, path: `http://127.0.0.1:${dead}/hook` }, operations: { log: logs() } } },
  { name: 'nolog.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { hook: hookOf({ log: { enable: false } }), operations: { log: logs() } } },
  { name: 'acl.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { hook: hookOf(), network: { http: { frontEnd: { accessControl: { enable: true, matchingList: [{ pattern: '$URL[/secret]', action: 'deny' }] } } } } } },
  { name: 'byp.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { hook: hookOf(), network: bypassing, operations: { log: logs() } } },
  { name: 'skipbyp.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
    functions: { hook: hookOf({ skipIfMatched: { bypass: true } }), network: bypassing } },
], { extra: { functions: { operations: { log: { meta: { dir: 'logs' } } } } } });
t.teardown(async () => {
  releaseSlow(); coRelease();
  await server.stop(); await origin.stop();
  await new Promise<void>((r) => hook.close(() => r()));
  fs.rmSync(server.dir, { recursive: true, force: true });
});

async function send(h: string, p: string, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}) {
  const r = await request(`http://127.0.0.1:${port}${p}`, {
    method: (opts.method ?? 'GET') as 'GET', headers: { host: h, 'user-agent': 'tap/1', ...opts.headers }, ...(opts.body === undefined ? {} : { body: opts.body }),
  });
  return { status: r.statusCode, headers: r.headers, cache: String(r.headers['x-cache']), body: await r.body.text() };
}
const api = async (p: string) => {
  const r = await request(`http://127.0.0.1:${server.apiPort}${p}`);
  return { status: r.statusCode, json: JSON.parse(await r.body.text()) as { result: unknown } };
};
const seen = (p: string) => origin.seen.filter((s) => s.url === p);
const hookCalls = (p: string) => calls.filter((c) => c.path === p);
const logFile = (h: string, kind: string) => path.join(server.dir, 'logs', h, `${kind}.log`);
const lines = (h: string, kind: string): string[] =>
  fs.existsSync(logFile(h, kind)) ? fs.readFileSync(logFile(h, kind), 'utf8').split('\n').filter((l) => l !== '' && (!l.startsWith('#') || l.startsWith('#[ERROR'))) : [];
async function lineWith(h: string, kind: string, pred: (l: string) => boolean, what: string): Promise<string> {
  await until(() => lines(h, kind).some(pred), what);
  return lines(h, kind).find(pred)!;
}

t.test('the hook gets the request document with JSON, the context id, the unescaped param, and the request goes on', async (t) => {
  const r = await send('hook.test', '/continue/a?q=1', { headers: { 'x-mark': 'm1' } });
  t.equal(r.status, 200);
  t.equal(r.cache, 'TCP_MISS');
  t.equal(seen('/continue/a?q=1').length, 1, 'the origin was asked for the client URL');
  const c = hookCalls('/continue/a')[0]!;
  t.equal(c.headers['content-type'], 'application/json');
  t.match(c.headers['x-svcx-forwarded-context-id'], /^[0-9a-f-]{36}$/);
  t.match(c.doc, { host: 'hook.test', clientIp: '127.0.0.1', protocol: 'http', body: null, param: { site: 'a b', n: 1 }, functions: null });
  t.type(c.doc.sessionId, 'number');
  t.match(String(c.doc.message), /^GET \/continue\/a\?q=1 HTTP\/1\.1\r\n/);
  t.match(String(c.doc.message), /\r\nx-mark: m1\r\n/);
  t.ok(String(c.doc.message).endsWith('\r\n\r\n'));
  const access = await lineWith('hook.test', 'access', (l) => l.startsWith('GET /continue/a '), 'the access line');
  t.equal(access.split(' ').at(-1), c.headers['x-svcx-forwarded-context-id'], 'access log and hook share the x-ctx-id');
  t.match(access, / 200 TCP_MISS y /, 'x-hook y');
  const hookLine = await lineWith('hook.test', 'origin', (l) => l.includes(' hook1 ') && l.includes(String(c.headers['x-svcx-forwarded-context-id'])), 'the hook1 origin line');
  t.match(hookLine, / POST /);
  t.match(hookLine, /\/hook\/v1\?x=1/);
  t.equal((await send('hook.test', '/continue/a?q=1')).cache, 'TCP_HIT', 'the engine key: a second request is a hit');
});

t.test('a request carrying X-SVCX-Forwarded-Context-Id (a hook calling back) logs under that x-ctx-id and hooks with it', async (t) => {
  const id = '0b7e6f7c-1d2a-4c3b-9e8f-0123456789ab';
  t.equal((await send('hook.test', '/continue/cb', { headers: { 'x-svcx-forwarded-context-id': id } })).status, 200);
  t.equal(hookCalls('/continue/cb')[0]!.headers['x-svcx-forwarded-context-id'], id);
  const line = await lineWith('hook.test', 'access', (l) => l.startsWith('GET /continue/cb '), 'callback line');
  t.equal(line.split(' ').at(-1), id);
  await send('hook.test', '/continue/cb2', { headers: { 'x-svcx-forwarded-context-id': 'not-a-uuid' } });
  const other = await lineWith('hook.test', 'access', (l) => l.startsWith('GET /continue/cb2 '), 'second line');
  t.not(other.split(' ').at(-1), 'not-a-uuid', 'only a UUID is taken');
});

t.test('an answer with a code other than 100 answers the client at once, logged TCP_DENY', async (t) => {
  const r = await send('hook.test', '/deny');
  t.equal(r.status, 401);
  t.equal(r.body, 'no entry');
  t.equal(r.headers['www-authenticate'], 'Basic realm="x"');
  t.equal(seen('/deny').length, 0, 'the origin is never asked');
  t.match(await lineWith('hook.test', 'access', (l) => l.startsWith('GET /deny '), 'deny line'), /^GET \/deny 401 TCP_DENY y /);
});

t.test('request headers are edited, cacheKey is the only key (fileinfo, purge), userData and cacheKey reach the access log', async (t) => {
  const a = await send('hook.test', '/key/1', { headers: { 'x-remove': 'gone', 'x-list': 'a' } });
  t.equal(a.status, 200);
  t.equal(a.cache, 'TCP_MISS');
  const o = seen('/shared/k1');
  t.equal(o.length, 1, 'the origin is asked for the key (a path) when there is no originRequest');
  t.equal(o[0]!.headers['x-user'], 'u1');
  t.equal(o[0]!.headers['x-remove'], undefined);
  t.equal(o[0]!.headers['x-list'], 'a, b');
  const b = await send('hook.test', '/key/2');
  t.equal(b.cache, 'TCP_HIT', 'another URL with the same cacheKey is a hit');
  t.equal(b.body, a.body);
  t.equal(seen('/key/1').length + seen('/key/2').length, 0, 'the client URLs are never asked');
  const info = await api('/monitoring/fileinfo?url=hook.test/shared/k1');
  t.equal(info.status, 200, 'fileinfo finds the object under the hook key');
  t.equal((await api('/monitoring/fileinfo?url=hook.test/key/1')).status, 404, 'nothing under the client URL');
  const line = await lineWith('hook.test', 'access', (l) => l.startsWith('GET /key/1 '), 'key line');
  t.match(line, /^GET \/key\/1 200 TCP_MISS y \/shared\/k1 gold\+plan - /);
  t.equal(((await api('/command/purge?url=hook.test/shared/k1')).json.result as { Count: number }).Count, 1, 'invalidation uses the hook key');
  t.equal((await send('hook.test', '/key/3')).cache, 'TCP_REFRESH_MISS', 'purged: fetched anew');
});

t.test('originRequest is the only origin request: its URL, headers added without overwriting the client or the Host', async (t) => {
  const r = await send('hook.test', '/origin');
  t.equal(r.status, 200);
  const o = seen('/real?x=1');
  t.equal(o.length, 1);
  t.equal(o[0]!.method, 'GET');
  t.equal(o[0]!.headers['x-extra'], '1');
  t.equal(o[0]!.headers['user-agent'], 'tap/1', 'a client header stays');
  t.equal(o[0]!.headers.host, `hook.test:${origin.port}`, 'the Host is the engine\'s, never the hook\'s');
  t.equal(seen('/origin').length, 0);
  t.match(await lineWith('hook.test', 'access', (l) => l.startsWith('GET /origin '), 'origin line'), /^GET \/origin 200 TCP_MISS y \/o-key - 1 /);
});

t.test('a method change without methodSwitchable is 405', async (t) => {
  const r = await send('hook.test', '/switch');
  t.equal(r.status, 405);
  t.ok(r.headers.allow);
  t.equal(seen('/sw').length, 0);
});

t.test('a hook answer carrying the nolog directive leaves no hook1 line; the request is logged as usual', async (t) => {
  t.equal((await send('hook.test', '/nolog')).status, 200);
  const id = String(hookCalls('/nolog')[0]!.headers['x-svcx-forwarded-context-id']);
  await lineWith('hook.test', 'access', (l) => l.startsWith('GET /nolog ') && l.includes(id), 'the access line');
  // The origin fetch's line is written after the hook call's would have been, in the same file.
  await lineWith('hook.test', 'origin', (l) => l.includes(id) && !l.includes(' hook1 '), 'the origin fetch line');
  t.notOk(lines('hook.test', 'origin').some((l) => l.includes(id) && l.includes(' hook1 ')), 'no hook1 line for that call');
});

t.test('cacheKey null bypasses the cache', async (t) => {
  await send('hook.test', '/nokey');
  const r = await send('hook.test', '/nokey');
  t.equal(r.status, 200);
  t.equal(seen('/nokey').length, 2, 'both went to the origin');
  t.equal((await api('/monitoring/fileinfo?url=hook.test/nokey')).status, 404, 'nothing stored');
  const line = await lineWith('hook.test', 'origin', (l) => l.includes(' hook1 ') && / null /.test(l), 'the hook line of a bypass answer');
  t.match(line, / POST /, 'x-sc-chain-info is null for a cache bypass');
});

t.test('a bypassed request is hooked then passed through; an instant bypass lets the hook headers win; skipIfMatched.bypass skips the hook', async (t) => {
  const r = await send('byp.test', '/pass/plain', { headers: { 'x-debug': 'client' } });
  t.equal(r.status, 200);
  t.equal(hookCalls('/pass/plain').length, 1);
  const plain = seen('/pass/plain');
  t.equal(plain.length, 1);
  t.equal(plain[0]!.headers['x-from-hook'], 'h', 'the hook\'s request edits reach the origin');
  t.equal(plain[0]!.headers['x-debug'], 'client', 'originRequest headers do not overwrite the client\'s');
  await send('byp.test', '/pass/instant', { headers: { 'x-debug': 'client' } });
  t.equal(seen('/pass/instant')[0]!.headers['x-debug'], 'hook', 'under instant bypass the hook headers win');
  const before = calls.length;
  t.equal((await send('skipbyp.test', '/pass/plain')).status, 200);
  t.equal(calls.length, before, 'no hook call for a bypassed request');
  t.equal(seen('/pass/plain').length, 2);
});

t.test('cacheTtl sets the lifetime of a 2xx (the origin said 600 s)', async (t) => {
  await send('hook.test', '/ttl');
  const info = await api('/monitoring/fileinfo?url=hook.test/ttl');
  const left = (info.json.result as Record<string, unknown>[])[0]!['TTL-Left'] as [string, number];
  t.ok(left[1] <= 5 && left[1] >= 0, `TTL-Left ${left[1]}`);
});

t.test('cacheResult overrides the logged cache result', async (t) => {
  const r = await send('hook.test', '/result');
  t.equal(r.cache, 'TCP_MISS');
  t.match(await lineWith('hook.test', 'access', (l) => l.startsWith('GET /result '), 'result line'), /^GET \/result 200 TCP_REFRESH_HIT y /);
});

t.test('a client HEAD is fetched from the origin as GET and stored', async (t) => {
  const r = await send('hook.test', '/head', { method: 'HEAD' });
  t.equal(r.status, 200);
  t.equal(r.body, '');
  t.equal(seen('/head-key').length, 1);
  t.equal(seen('/head-key')[0]!.method, 'GET');
  t.equal((await send('hook.test', '/head')).cache, 'TCP_HIT');
});

t.test('a POST is hooked with its body; originRequest body goes to the origin; same key is a hit', async (t) => {
  const a = await send('hook.test', '/api', { method: 'POST', body: JSON.stringify({ q: 'shoes', t: 1 }), headers: { 'content-type': 'application/json' } });
  t.equal(a.status, 200);
  t.equal(hookCalls('/api')[0]!.doc.body, '{"q":"shoes","t":1}');
  const o = origin.seen.filter((s) => s.url === '/api');
  t.equal(o.length, 1);
  t.equal(o[0]!.method, 'POST');
  t.equal(o[0]!.body.toString(), 'q=shoes');
  const b = await send('hook.test', '/api', { method: 'POST', body: JSON.stringify({ q: 'shoes', t: 2 }) });
  t.equal(b.cache, 'TCP_HIT', 'another body, same hook key');
  t.equal(b.body, a.body);
});

t.test('many clients mapped to one cacheKey make one origin fetch', async (t) => {
  const before = calls.length;
  const all = Promise.all([1, 2, 3, 4, 5].map((i) => send('hook.test', `/co/${i}`)));
  await until(() => calls.slice(before).filter((c) => c.path.startsWith('/co/')).length === 5, 'five hook calls');
  // The worker has read the five hook answers once a later hook round trip is over.
  t.equal((await send('hook.test', '/probe')).status, 204);
  coRelease();
  const rs = await all;
  t.equal(seen('/co').length, 1);
  t.equal(new Set(rs.map((r) => r.body)).size, 1);
});

t.test('an error answer (svchook1) gives 510 and the chain error in the origin log', async (t) => {
  const r = await send('hook.test', '/err510');
  t.equal(r.status, 510);
  t.match(r.body, /svchook1 500: db down/);
  const line = await lineWith('hook.test', 'origin', (l) => l.includes(' hook1 ') && l.includes('db+down'), 'chain error');
  t.match(line, /hook1 svchook1\+500:\+db\+down - /);
  t.equal((await send('hook.test', '/notjson')).status, 510, 'an answer that is not JSON is an error answer too');
});

t.test('a hook HTTP status other than 200 gives 403', async (t) => {
  t.equal((await send('hook.test', '/status500')).status, 403);
  t.equal(seen('/status500').length, 0);
});

t.test('a slow hook (receiveTimeout) gives 403 and a Receive-Timeout origin line', async (t) => {
  const r = await send('hook.test', '/slow');
  t.equal(r.status, 403);
  const line = await lineWith('hook.test', 'origin', (l) => l.startsWith('#[ERROR:02]') && l.includes(' hook1 '), 'timeout line');
  t.match(line, /Receive-Timeout/);
});

t.test('a hook that is down gives 403 and the origin is not asked', async (t) => {
  const r = await send('down.test', '/d1');
  t.equal(r.status, 403);
  t.equal(seen('/d1').length, 0);
  await lineWith('down.test', 'origin', (l) => l.startsWith('#[ERROR') && l.includes(' hook1 '), 'hook error line');
});

t.test('matchingList selects: others are not hooked and log x-hook n', async (t) => {
  const before = calls.length;
  t.equal((await send('some.test', '/plain/1')).status, 200);
  t.equal(calls.length, before, 'no hook call');
  t.equal((await send('some.test', '/hooked/1')).status, 200);
  t.equal(calls.length, before + 1);
  const plain = await lineWith('some.test', 'access', (l) => l.includes(' /plain/1 '), 'plain line');
  const hooked = await lineWith('some.test', 'access', (l) => l.includes(' /hooked/1 '), 'hooked line');
  // svc: ... x-ctx-id x-hook x-vhost cs-host
  t.equal(plain.split(' ').at(-3), 'n');
  t.equal(hooked.split(' ').at(-3), 'y');
});

t.test('log.enable false writes no hook1 line', async (t) => {
  t.equal((await send('nolog.test', '/continue/q')).status, 200);
  await lineWith('nolog.test', 'origin', (l) => l.includes('/continue/q'), 'the origin fetch line');
  t.notOk(lines('nolog.test', 'origin').some((l) => l.includes(' hook1 ')));
});

t.test('with skipIfMatched.accessControl false a denied request is shown to the hook and the denial stands', async (t) => {
  const before = hookCalls('/secret').length;
  t.equal((await send('acl.test', '/secret')).status, 403);
  t.equal(hookCalls('/secret').length, before + 1);
  t.equal(seen('/secret').length, 0);
});
