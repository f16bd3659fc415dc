// Black-box: the global logs of the real server (primary + 1 worker) and the per-host dns and
// originError sides, read from the files: origin failures in the error and originError logs with
// the transaction's vhost, URL and x-ctx-id, the dns log of a domain origin, metrics snapshots on
// their cron, the system record, the log listener on env.log.meta.port, a worker crash and a
// refused setting in the error log, info and watch under their rolling names.
import fs from 'node:fs';
import dgram from 'node:dgram';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer, workerPids } from '../helpers/server.js';
import { until, waitFor } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
origin.on('/range', (_q, res) => { res.writeHead(200, { 'content-length': 5 }); res.end('whole'); });
const dead = await freePort();
const port = await freePort();
const udpPort = await freePort();
const host = (name: string, address: string, log: Record<string, unknown> = {}) => ({
  name, listen: `127.0.0.1:${port}`, origin: { address: [address] }, functions: { operations: { log } },
});
const server = await startServer([
  host('good.test', `127.0.0.1:${origin.port}`),
  // Its answers carry the request id: the error lines must name the transaction the client saw.
  { ...host('down.test', `127.0.0.1:${dead}`), functions: { operations: { log: {} }, network: { http: { frontEnd: { answerFields: { requestId: { enable: true } } } } } } },
  host('named.test', `localhost:${origin.port}`, { dns: { enable: true } }),
  host('bad.test', `127.0.0.1:${origin.port}`, { access: { enable: true, form: 'custom', format: 'ok %Z' } }),
  // Objects stored whole only: a client's Range miss is fetched from the origin without Range.
  { ...host('whole.test', `127.0.0.1:${origin.port}`), functions: { operations: { log: {} }, network: { cache: { limitMaxRange: 0 } } } },
], {
  extra: {
    functions: { operations: { log: { meta: { dir: 'logs' }, access: { enable: false }, origin: { enable: false }, dns: { enable: false } } } },
    env: { log: {
      meta: { port: udpPort },
      info: { rolling: { time: 1440 } }, watch: { rolling: { size: 10 } },
      error: { enable: true, filter: { minLevel: 'Notice' } },
      metrics: { enable: true, schedule: '* * * * * *', retention: 1 },
      system: { enable: true },
      originError: { enable: true, warning: true },
    } },
  },
});
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(server.dir, { recursive: true, force: true }); });

const globalDir = path.join(server.dir, 'svclog');
const read = (file: string): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : []);
const errorLines = (): string[] => read(path.join(globalDir, 'error.log'));

async function get(h: string, p: string, headers: Record<string, string> = {}): Promise<{ status: number; ctx: string }> {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host: h, ...headers } });
  await r.body.text();
  return { status: r.statusCode, ctx: String(r.headers['x-ctx-id'] ?? '') };
}

t.test('an origin failure is in the error log and the originError log with its transaction', async (t) => {
  const r = await get('down.test', '/nothing?x=1');
  t.ok(r.status >= 500, `answered ${r.status}`);
  await until(() => errorLines().some((l) => l.includes(' 2001 down.test ')), 'the 2001 line');
  const line = errorLines().find((l) => l.includes(' 2001 down.test '))!;
  t.match(line, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d 2001 down\.test \/nothing\?x=1 \S+ \[Error\] origin transaction failed: \S+ 127\.0\.0\.1 /);
  const ctx = line.split(' ')[5]!;
  t.match(r.ctx, /^[0-9a-f-]{36}$/, 'the answer carries its request id');
  t.equal(ctx, r.ctx, 'the x-ctx-id of the transaction');
  const oe = path.join(globalDir, 'originError.log');
  await until(() => read(oe).some((l) => l.includes(' down.test ')), 'the originError line');
  t.match(read(oe).find((l) => l.includes(' down.test '))!, new RegExp(`^\\S+ \\S+ (Connect-Timeout|Server-Close) down\\.test 127\\.0\\.0\\.1 \\S+ GET /nothing\\?x=1 - 0 - ${ctx}$`));
});

t.test('an invalid custom access format is in the error log for its host', async (t) => {
  await until(() => errorLines().some((l) => l.includes(' 4004 bad.test ')), 'the 4004 line');
  t.match(errorLines().find((l) => l.includes(' 4004 bad.test '))!, /\[Warning\] custom access log format invalid; svc form used: host bad\.test: functions\.operations\.log\.access\.format is invalid \(/);
});

t.test('with warning, a Range request answered 200 is in the originError log', async (t) => {
  const r = await get('good.test', '/range', { range: 'bytes=0-1' });
  t.ok(r.status === 200 || r.status === 206);
  const oe = path.join(globalDir, 'originError.log');
  await until(() => read(oe).some((l) => l.includes('NotPartialResponseOnRangeRequest good.test')), 'the warning line');
  // The Range the origin was asked (the piece of a client's Range miss), as cs-range.
  const sent = origin.seen.find((s) => s.url === '/range')?.headers.range;
  t.match(sent, /^bytes=0-\d+$/, 'the origin request carried a Range');
  const line = read(oe).find((l) => l.includes(' good.test '))!;
  t.match(line, / NotPartialResponseOnRangeRequest good\.test 127\.0\.0\.1 127\.0\.0\.1 GET \/range \S+ 200 5 /);
  t.equal(line.split(' ')[8], sent, 'cs-range is the Range the origin was asked');
});

t.test('the originError log judges the Range of the origin request: a Range miss fetched whole is no warning', async (t) => {
  const r = await get('whole.test', '/range?whole', { range: 'bytes=0-1' });
  t.ok(r.status === 200 || r.status === 206, `answered ${r.status}`);
  t.equal(origin.seen.find((s) => s.url === '/range?whole')?.headers.range, undefined, 'the origin was asked for the whole object');
  // A later exchange of the same worker that is a warning: once its line is written, the first
  // exchange's line would have been too.
  await get('good.test', '/range?after', { range: 'bytes=0-1' });
  const oe = path.join(globalDir, 'originError.log');
  await until(() => read(oe).some((l) => l.includes(' /range?after ')), 'the later warning line');
  t.notOk(read(oe).some((l) => l.includes(' /range?whole ')), 'no line for the exchange without Range');
});

t.test('the dns log of a host records the resolution of its domain origin', async (t) => {
  t.equal((await get('named.test', '/hello')).status, 200);
  const file = path.join(server.dir, 'logs', 'named.test', 'dns.log');
  await until(() => read(file).some((l) => l.includes(' localhost ')), 'the dns line');
  const lines = read(file);
  t.equal(lines[2], '#Fields: date time domain ttl ip-list ip-count time-taken result');
  t.match(lines.find((l) => l.includes(' localhost '))!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d localhost \d+ (127\.0\.0\.1|::1)(,\S+)? [12] \d+ success$/);
  t.notOk(fs.existsSync(path.join(server.dir, 'logs', 'good.test', 'dns.log')), 'a host with the dns log off has none');
});

t.test('the metrics log writes the /metrics text on its schedule into a directory per day', async (t) => {
  const days = (): string[] => (fs.existsSync(globalDir) ? fs.readdirSync(globalDir).filter((d) => /^metrics_\d{8}$/.test(d)) : []);
  // A snapshot being written is `.tmp` until its rename: only finished ones count.
  const files = (): string[] => days().flatMap((d) => fs.readdirSync(path.join(globalDir, d)).filter((f) => !f.endsWith('.tmp')).map((f) => path.join(d, f)));
  await until(() => files().length >= 2, 'two snapshots', 15_000);
  const f = files().sort().at(-1)!;
  t.match(f, /^metrics_(\d{8})\/metrics_\1\d{6}\.log$/);
  t.match(fs.readFileSync(path.join(globalDir, f), 'utf8'), /# TYPE svc_client_requests_total counter/);
});

t.test('the system log has the System figures', async (t) => {
  await until(() => read(path.join(globalDir, 'system.log')).length >= 1, 'a system record');
  t.match(read(path.join(globalDir, 'system.log'))[0], /^\S+ \S+ (Healthy|Inactive|Emergency) \{"CPU":\{.*"Mem":\{/);
});

t.test('a line sent to env.log.meta.port lands in the error log', async (t) => {
  const s = dgram.createSocket('udp4');
  t.teardown(() => s.close());
  s.send('error test-sender 3001 /cache/x: EIO: i/o error, write', udpPort, '127.0.0.1');
  await until(() => errorLines().some((l) => l.includes('test-sender')), 'the line from the listener');
  t.match(errorLines().find((l) => l.includes('test-sender'))!, / 3001 - - - \[Error\] cache disk I\/O error: test-sender: \/cache\/x: EIO: i\/o error, write$/);
});

t.test('a worker that dies is in the error log', async (t) => {
  // The server process is the supervisor: the worker is a grandchild, under the primary.
  const [pid] = workerPids(server);
  t.ok(pid !== undefined, 'a worker runs');
  process.kill(pid!, 'SIGKILL');
  await until(() => errorLines().some((l) => l.includes(' 5001 ')), 'the 5001 line');
  t.match(errorLines().find((l) => l.includes(' 5001 '))!, new RegExp(`\\[Alert\\] worker died: worker 0 \\(pid ${pid}\\) signal SIGKILL; replacing it$`));
  await server.waitForLog((l) => l.msg === 'worker died; replacing it');
  t.ok(await waitFor(() => { const now = workerPids(server); return now.length > 0 && !now.includes(pid!); }, { timeoutMs: 15_000, intervalMs: 200 }), 'a replacement');
});

t.test('a setting refused on SIGHUP is in the error log; info and watch are under their rolling names', async (t) => {
  const good = fs.readFileSync(server.settingPath, 'utf8');
  t.teardown(() => fs.writeFileSync(server.settingPath, good));
  fs.writeFileSync(server.settingPath, JSON.stringify({ ...JSON.parse(good), hosting: [{ name: 'x', origin: { address: ['not an address'] } }] }));
  server.signal('SIGHUP');
  await until(() => errorLines().some((l) => l.includes(' 1001 ')), 'the 1001 line');
  t.match(errorLines().find((l) => l.includes(' 1001 '))!, / 1001 - - - \[Warning\] setting refused: from sighup: /);
  const names = fs.readdirSync(globalDir);
  t.ok(names.some((n) => /^info_\d{8}_0000\.log$/.test(n)), 'info rolls daily');
  t.ok(names.some((n) => /^watch_\d{8}_\d{6}\.log$/.test(n)), 'watch rolls by size (seconds in the name)');
  const watch = read(path.join(globalDir, names.find((n) => n.startsWith('watch_'))!));
  t.match(watch[0], /^\S+ \S+ 00010001 - \{/);
  t.notOk(errorLines().some((l) => / 4001 /.test(l)), 'no log failed');
});
