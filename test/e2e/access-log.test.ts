// Black-box: the per-host access and origin logs of the real server (primary + 2 workers), read
// from the files: each access form, every svc field, the custom % codes, xff modes, loopback
// off, an aborted transaction, an origin failure line, and goaccess reading the combined form.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { SVC_FIELDS } from '../../lib/log/access/forms.js';
import { ORIGIN_FIELDS } from '../../lib/log/origin/line.js';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
const dead = await freePort();
const port = await freePort();
let release: () => void = () => undefined;
const hung = new Promise<void>((r) => { release = r; });
origin.on('/hang', (_q, res) => { void hung.then(() => res.end('late')); });
origin.on('/dir/file.txt', (_q, res) => { res.writeHead(200, { 'content-length': 5, 'x-a': 'v 1' }); res.end('hello'); });
origin.on('/obj', (_q, res) => { res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 5, 'cache-control': 'max-age=600' }); res.end('hello'); });

const CUSTOM = ['%a', '%A', '%m', '%U', '%q', '%{k}Q', '%s', '%S', '%b', '%O', '%I', '%y', '%z', '%c', '%D', '%R', '%T', '%e', '%E',
  '%f', '%h', '%H', '%K', '%{user-agent}i', '%{user-agent}G', '%j', '%k', '%{x-a}o', '%{x-a}l', '%400,404{user-agent}i',
  '%!404{user-agent}i', '%200{user-agent}i', '%!200{user-agent}i', '%{sid}C', '%{o=}c', '%{cacheKey}N', '%F', '%L', '%X', '%x',
  '%{%Y/%m/%d}t', '%t', '%g', '%P', '%r', '%u', '%B', '%n', '%>s', '%%'].join('|');

const host = (name: string, access: Record<string, unknown>, o: string = `127.0.0.1:${origin.port}`) => ({
  name, listen: `127.0.0.1:${port}`, origin: { address: [o] },
  functions: { operations: { log: { access: { loopback: true, ...access }, origin: { loopback: true } } } },
});
const server = await startServer([
  host('svc.test', { form: 'svc', xff: 'all' }),
  host('a.test', { form: 'weblogA', xff: 'clientIp' }),
  host('b.test', { form: 'weblogB', xff: 'trimClientIp' }),
  host('c.test', { form: 'custom', format: CUSTOM }),
  host('bad.test', { form: 'custom', format: 'ok %Z' }),
  host('quiet.test', { loopback: false }),
  host('down.test', {}, `127.0.0.1:${dead}`),
  host('many.test', { form: 'svc' }),
], { workers: 2, extra: { functions: { operations: { log: { meta: { dir: 'logs' } } } } } });
t.teardown(async () => { release(); await server.stop(); await origin.stop(); fs.rmSync(server.dir, { recursive: true, force: true }); });

const logDir = path.join(server.dir, 'logs');
const fileOf = (h: string, kind = 'access'): string => path.join(logDir, h, `${kind}.log`);
const linesOf = (h: string, kind = 'access'): string[] =>
  fs.existsSync(fileOf(h, kind)) ? fs.readFileSync(fileOf(h, kind), 'utf8').split('\n').filter((l) => l !== '') : [];
const entries = (h: string, kind = 'access'): string[] => linesOf(h, kind).filter((l) => !l.startsWith('#') || l.startsWith('#[ERROR'));

async function get(h: string, p: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host: h, 'user-agent': 'tap client/1.0', ...headers } });
  return { status: r.statusCode, body: await r.body.text(), headers: r.headers };
}

async function waitLines(h: string, n: number, kind = 'access'): Promise<string[]> {
  await until(() => entries(h, kind).length >= n, `${n} ${kind} lines of ${h}`);
  return entries(h, kind);
}

t.test('svc form: the #Fields header and every field of document 3 in its order', async (t) => {
  const r = await get('svc.test', '/obj?x=1&y=a b', { 'x-forwarded-for': '10.1.1.1, 10.2.2.2', referer: 'http://ref.example/p', range: 'bytes=0-1' });
  const [line] = await waitLines('svc.test', 1);
  const all = linesOf('svc.test');
  t.equal(all[0], '#Software: svc-edge');
  t.equal(all[2], `#Fields: ${SVC_FIELDS.join(' ')}`);
  const v = line!.split(' ');
  t.equal(v.length, SVC_FIELDS.length, 'one value per field, no space inside a value');
  const f = Object.fromEntries(SVC_FIELDS.map((k, i) => [k, v[i]]));
  t.match(f.date, /^\d{4}-\d\d-\d\d$/);
  t.match(f.time, /^\d\d:\d\d:\d\d$/);
  t.same([f['s-ip'], f['cs-method'], f['cs-uri-stem'], f['cs-uri-query'], f['s-port']], ['127.0.0.1', 'GET', '/obj', 'x=1&y=a%20b', String(port)]);
  t.equal(f['c-ip'], '10.1.1.1,10.2.2.2,127.0.0.1', 'xff all: the client\'s X-Forwarded-For, then the client');
  t.equal(f['cs(User-Agent)'], 'tap+client/1.0', 'spaces written as +');
  t.equal(f['sc-status'], String(r.status));
  t.ok(Number(f['sc-bytes']) > 5, 'head plus content');
  t.match(f['time-taken'], /^\d+$/);
  t.equal(f['cs-referer'], 'http://ref.example/p');
  t.equal(f['cs-range'], 'bytes=0-1');
  t.match(f['sc-cachehit'], /^TCP_[A-Z_]+$/);
  t.match(f['session-id'], /^\d+$/);
  t.equal(f['x-transaction-status'], 'c');
  t.match(f['x-ctx-id'], /^[0-9a-f-]{36}$/);
  t.equal(f['x-vhost'], 'svc.test');
  t.equal(f['cs-host'], 'svc.test');
});

t.test('weblogA is the combined format and goaccess counts every request', async (t) => {
  for (let i = 0; i < 5; i++) await get('a.test', `/page/${i}`, { 'x-forwarded-for': '10.9.9.9', referer: 'http://r.example/' });
  const lines = await waitLines('a.test', 5);
  t.match(lines[0], /^127\.0\.0\.1 - - \[\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET \/page\/0 HTTP\/1\.1" 200 \d+ "http:\/\/r\.example\/" "tap client\/1\.0"$/,
    'xff clientIp: the client alone');
  const report = JSON.parse(execFileSync('goaccess', [fileOf('a.test'), '--log-format=COMBINED', '-o', 'json', '--no-global-config'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString()) as
    { general: { total_requests: number; valid_requests: number; failed_requests: number } };
  t.equal(report.general.total_requests, 5);
  t.equal(report.general.valid_requests, 5);
  t.equal(report.general.failed_requests, 0);
});

t.test('weblogB is IIS W3C with its #Fields header; trimClientIp keeps the X-Forwarded-For alone', async (t) => {
  await get('b.test', '/iis?q=1', { 'x-forwarded-for': '10.3.3.3' });
  await get('b.test', '/iis2');
  const lines = await waitLines('b.test', 2);
  t.match(linesOf('b.test')[2], /^#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs\(User-Agent\) cs\(Referer\) sc-status/);
  const one = lines.find((l) => l.includes('/iis '))!.split(' ');
  const two = lines.find((l) => l.includes('/iis2 '))!.split(' ');
  t.equal(one[8], '10.3.3.3', 'the X-Forwarded-For without the client');
  t.equal(two[8], '127.0.0.1', 'no X-Forwarded-For: the client');
  t.same([one[3], one[4], one[5], one[11]], ['GET', '/iis', 'q=1', '200']);
});

t.test('custom form: every % code, status conditions, time formats, hook fields -', async (t) => {
  // The Range makes the answer a 206 (a Range miss is served by piece, README "Partial storage").
  await get('c.test', '/dir/file.txt?k=v1&z=2', { cookie: 'sid=abc; o=1', range: 'bytes=0-', 'accept-encoding': 'gzip' });
  const [line] = await waitLines('c.test', 1);
  const codes = CUSTOM.split('|');
  const v = line!.split('|');
  t.equal(v.length, codes.length, line);
  const f = Object.fromEntries(codes.map((c, i) => [c, v[i]]));
  const want: Record<string, string | RegExp> = {
    '%a': '127.0.0.1', '%A': '127.0.0.1', '%m': 'GET', '%U': '/dir/file.txt', '%q': 'k=v1&z=2', '%{k}Q': 'v1', '%s': '206',
    '%S': /^TCP_[A-Z_]+$/, '%b': '5', '%O': /^\d+$/, '%I': /^\d+$/, '%y': /^\d+$/, '%z': /^\d+$/, '%c': '5', '%D': /^\d+$/,
    '%R': /^\d+$/, '%T': '0', '%e': /^\d+$/, '%E': /^[0-9a-f-]{36}$/, '%f': 'file.txt', '%h': 'c.test', '%H': 'http',
    '%K': 'HTTP/1.1', '%{user-agent}i': 'tap client/1.0', '%{user-agent}G': 'tap+client/1.0', '%j': 'bytes=0-', '%k': 'gzip',
    '%{x-a}o': 'v 1', '%{x-a}l': 'v+1', '%400,404{user-agent}i': '-', '%!404{user-agent}i': 'tap client/1.0',
    '%200{user-agent}i': '-', '%!200{user-agent}i': 'tap client/1.0', '%{sid}C': 'abc', '%{o=}c': '1', '%{cacheKey}N': '-',
    '%F': '-', '%L': '-', '%X': 'C', '%x': 'c', '%{%Y/%m/%d}t': /^\d{4}\/\d\d\/\d\d$/, '%t': /^\[\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000\]$/,
    '%g': /^\d\d\/[A-Z][a-z]{2}\/\d{4}:/, '%P': String(port), '%r': 'GET /dir/file.txt?k=v1&z=2 HTTP/1.1',
    '%u': 'http://c.test/dir/file.txt?k=v1&z=2', '%B': /^(\d+|-)$/, '%n': '-', '%>s': '206', '%%': '%',
  };
  for (const [code, value] of Object.entries(want)) {
    if (typeof value === 'string') t.equal(f[code], value, code);
    else t.match(f[code], value, code);
  }
  t.same(codes.filter((c) => !(c in want)), [], 'every code of the format checked');
});

t.test('an invalid custom format falls back to svc and says so', async (t) => {
  await get('bad.test', '/x');
  const [line] = await waitLines('bad.test', 1);
  t.equal(line!.split(' ').length, SVC_FIELDS.length);
  t.ok(server.logs.some((l) => l.includes('bad.test') && l.includes('svc form')), 'a warning names the host');
});

t.test('loopback false: requests from loopback are not logged', async (t) => {
  await get('quiet.test', '/q');
  await get('svc.test', '/after-quiet');
  await until(() => entries('svc.test').some((l) => l.includes('/after-quiet')), 'the line after');
  t.notOk(fs.existsSync(fileOf('quiet.test')));
});

t.test('a client that leaves before the answer starts is logged with status 0 and 0 bytes', async (t) => {
  const s = net.connect(port, '127.0.0.1', () => s.write('GET /hang HTTP/1.1\r\nHost: svc.test\r\n\r\n'));
  await until(() => origin.count('/hang') >= 1, 'the origin got the request');
  s.destroy();
  const lines = await waitLines('svc.test', 1);
  await until(() => entries('svc.test').some((l) => l.includes(' /hang ')), 'the aborted line');
  const v = entries('svc.test').find((l) => l.includes(' /hang '))!.split(' ');
  const f = Object.fromEntries(SVC_FIELDS.map((k, i) => [k, v[i]]));
  t.equal(f['sc-status'], '0');
  t.equal(f['sc-bytes'], '0');
  t.equal(f['x-transaction-status'], 'x');
  t.ok(lines.length > 0);
});

t.test('origin log: one line per exchange with its fields, sharing x-ctx-id with the access line', async (t) => {
  await get('svc.test', '/origin-check');
  await until(() => entries('svc.test', 'origin').some((l) => l.includes(' /origin-check ')), 'the origin line');
  t.equal(linesOf('svc.test', 'origin')[2], `#Fields: ${ORIGIN_FIELDS.join(' ')}`);
  const v = entries('svc.test', 'origin').find((l) => l.includes(' /origin-check '))!.split(' ');
  t.equal(v.length, ORIGIN_FIELDS.length);
  const f = Object.fromEntries(ORIGIN_FIELDS.map((k, i) => [k, v[i]]));
  t.same([f['cs-method'], f['s-domain'], f['s-ip'], f['s-port'], f['sc-status'], f['sc-sock-error'], f['x-cs-retry'], f['session-type']],
    ['GET', '127.0.0.1', '127.0.0.1', String(origin.port), '200', '-', 'n', 'cache']);
  t.match(f['cs-sid'], /^\d+$/);
  t.match(f['cs-tcount'], /^\d+$/);
  t.match(f['time-request'], /^\d\d:\d\d:\d\d\.\d{3}$/);
  const access = entries('svc.test').find((l) => l.includes(' /origin-check '))!.split(' ');
  t.equal(f['x-ctx-id'], access[SVC_FIELDS.indexOf('x-ctx-id')]);
  t.equal(f['session-id'], access[SVC_FIELDS.indexOf('session-id')]);
});

t.test('a failed origin exchange writes an #[ERROR:nn] line', async (t) => {
  const r = await get('down.test', '/nothing');
  t.ok(r.status >= 500);
  await until(() => entries('down.test', 'origin').some((l) => l.startsWith('#[ERROR:')), 'the error line');
  const line = entries('down.test', 'origin').find((l) => l.startsWith('#[ERROR:'))!;
  t.match(line, /^#\[ERROR:0[1-4]\] \d{4}-\d\d-\d\d .* GET 127\.0\.0\.1 \/nothing /);
});

t.test('two workers append to one access log: every request of a burst over new connections is one whole line', async (t) => {
  const dispatcher = new Agent({ connections: 32, pipelining: 1 });
  const n = 2000;
  for (let i = 0; i < n; i += 100) {
    await Promise.all(Array.from({ length: 100 }, async (_, j) => {
      const r = await request(`http://127.0.0.1:${port}/obj?n=${i + j}&pad=${'p'.repeat((i + j) % 300)}`, { headers: { host: 'many.test' }, dispatcher, reset: true });
      await r.body.text();
    }));
  }
  await dispatcher.close();
  const lines = await waitLines('many.test', n);
  t.equal(lines.length, n, 'one line per request');
  t.ok(lines.every((l) => l.split(' ').length === SVC_FIELDS.length && l.endsWith(' many.test many.test')), 'every line whole');
  const seen = new Set(lines.map((l) => /n=(\d+)/.exec(l)?.[1]));
  t.equal(seen.size, n, 'every request once');
});
