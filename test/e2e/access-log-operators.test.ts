// Black-box: the access logs of the real server as an operator's tools read them. Non-ASCII and
// quote bytes escaped as nginx writes them; requests the HTTP parser refuses (400, 408, 414, 431, 501)
// logged in the access log of the host they name, else of the listener's first host; goaccess
// reading the svc form by its #Fields line (referrer, URL, bytes); and JSON system-log lines with
// unique keys (the supervisor's carried `role` twice).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { SVC_FIELDS } from '../../lib/log/access/forms.js';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/raw-client.js';
import { projectRoot, startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
origin.on('/p1', (_q, res) => { res.writeHead(200, { 'content-length': 10 }); res.end('0123456789'); });
origin.on('/p2', (_q, res) => { res.writeHead(200, { 'content-length': 3 }); res.end('abc'); });
const port = await freePort();
const host = (name: string, form: string) => ({
  name, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  functions: { operations: { log: { access: { loopback: true, form } } } },
});
// first.test is the listener's first host: requests naming no host are logged there.
const server = await startServer([host('first.test', 'svc'), host('w3c.test', 'svc'), host('comb.test', 'weblogA'), host('ga.test', 'svc')],
  { extra: { functions: { operations: { log: { meta: { dir: 'logs' } } }, network: { http: { frontEnd: { headersTimeout: 1 } } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(server.dir, { recursive: true, force: true }); });

const fileOf = (h: string): string => path.join(server.dir, 'logs', h, 'access.log');
const entries = (h: string): string[] =>
  fs.existsSync(fileOf(h)) ? fs.readFileSync(fileOf(h), 'latin1').split('\n').filter((l) => l !== '' && !l.startsWith('#')) : [];
async function lineWith(h: string, part: string): Promise<string> {
  await until(() => entries(h).some((l) => l.includes(part)), `a line of ${h} with ${part}`);
  return entries(h).find((l) => l.includes(part))!;
}
const svcFields = (line: string): Record<string, string> => {
  const v = line.split(' ');
  return Object.fromEntries(SVC_FIELDS.map((k, i) => [k, v[i]!]));
};
/** UTF-8 bytes on the wire. */
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

t.test('non-ASCII and quote bytes of a request are written as nginx writes them, not double-encoded', async (t) => {
  for (const h of ['w3c.test', 'comb.test']) {
    const r = await rawRequest(port, Buffer.concat([utf8(`GET /p1?e=1 HTTP/1.1\r\nHost: ${h}\r\nUser-Agent: café "x"\r\nReferer: http://r.example/ü\r\nConnection: close\r\n\r\n`)]));
    t.equal(r.status, 200);
  }
  const svc = svcFields(await lineWith('w3c.test', 'e=1'));
  t.equal(svc['cs(User-Agent)'], 'caf\\xC3\\xA9+\\"x\\"');
  t.equal(svc['cs-referer'], 'http://r.example/\\xC3\\xBC');
  const combined = await lineWith('comb.test', 'e=1');
  t.match(combined, / "http:\/\/r\.example\/\\xC3\\xBC" "caf\\xC3\\xA9 \\"x\\""$/);
  t.notMatch(fs.readFileSync(fileOf('comb.test')), /\xc3/, 'no raw non-ASCII byte in the file');
});

t.test('requests the parser refuses are in the access log of the host they name, with their status and request line', async (t) => {
  const big = await rawRequest(port, `GET /big HTTP/1.1\r\nHost: comb.test\r\nX-Pad: ${'p'.repeat(200_000)}\r\n\r\n`);
  t.equal(big.status, 431);
  t.match(await lineWith('comb.test', '/big'), /^127\.0\.0\.1 - - \[[^\]]+\] "GET \/big HTTP\/1\.1" 431 \d+ "-" "-"$/);
  const unknown = await rawRequest(port, 'BREW /pot HTTP/1.1\r\nHost: w3c.test\r\nUser-Agent: teapot/1\r\n\r\n');
  t.equal(unknown.status, 501);
  const f = svcFields(await lineWith('w3c.test', '/pot'));
  t.same([f['cs-method'], f['cs-uri-stem'], f['sc-status'], f['cs(User-Agent)'], f['sc-cachehit'], f['x-vhost'], f['cs-host']],
    ['BREW', '/pot', '501', 'teapot/1', 'TCP_ERROR', 'w3c.test', 'w3c.test']);
  t.ok(Number(f['sc-bytes']) > 0, 'the refusal\'s bytes');
  // Past the parser's limit (the URL's and the fields' together), within one read of the socket.
  const long = await rawRequest(port, `GET /${'u'.repeat(40_000)} HTTP/1.1\r\nHost: w3c.test\r\n\r\n`);
  t.equal(long.status, 414);
  t.equal(svcFields(await lineWith('w3c.test', ' 414 '))['sc-status'], '414');
});

t.test('a refused request that names no host is in the access log of the listener\'s first host', async (t) => {
  const r = await rawRequest(port, 'GET /nohost HTTP/1.1\r\nBroken header line\r\n\r\n');
  t.equal(r.status, 400);
  const f = svcFields(await lineWith('first.test', '/nohost'));
  t.same([f['cs-method'], f['sc-status'], f['cs-host'], f['x-vhost']], ['GET', '400', '-', 'first.test']);
});

t.test('a request head that does not arrive in time is logged with its 408', async (t) => {
  const r = await rawRequest(port, 'GET /slow HTTP/1.1\r\nHost: w3c.test\r\n', { timeoutMs: 8000 });
  t.equal(r.status, 408);
  // node keeps no byte of an unfinished head: the line has the connection and the status.
  await until(() => entries('first.test').some((l) => svcFields(l)['sc-status'] === '408'), 'the 408 line');
  const f = svcFields(entries('first.test').find((l) => svcFields(l)['sc-status'] === '408')!);
  t.same([f['cs-method'], f['cs-uri-stem'], f['c-ip'], f['x-vhost']], ['-', '-', '127.0.0.1', 'first.test']);
});

/** goaccess's specifier for each field of a W3C #Fields line; the fields it has no use for are skipped. */
const GOACCESS: Record<string, string> = {
  date: '%d', time: '%t', 'cs-method': '%m', 'cs-uri-stem': '%U', 'c-ip': '%h', 'cs(User-Agent)': '%u', 'sc-status': '%s',
  'sc-bytes': '%b', 'time-taken': '%L', 'cs-referer': '%R', 'x-vhost': '%v',
};

t.test('goaccess reads the svc form by its #Fields line: referrer, URL and bytes', async (t) => {
  const sizes: number[] = [];
  for (const [p, ref] of [['/p1', 'http://one.example/a'], ['/p2', 'http://two.example/b'], ['/p1', 'http://one.example/c']] as const) {
    const r = await rawRequest(port, `GET ${p} HTTP/1.1\r\nHost: ga.test\r\nReferer: ${ref}\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\nConnection: close\r\n\r\n`);
    t.equal(r.status, 200);
    sizes.push(Buffer.byteLength(r.text, 'latin1'));
  }
  await until(() => entries('ga.test').length === 3, 'three lines');
  const fieldsLine = fs.readFileSync(fileOf('ga.test'), 'latin1').split('\n').find((l) => l.startsWith('#Fields: '))!;
  const format = fieldsLine.slice('#Fields: '.length).split(' ').map((f) => GOACCESS[f] ?? '%^').join(' ');
  const report = JSON.parse(execFileSync('goaccess', [fileOf('ga.test'), `--log-format=${format}`, '--date-format=%Y-%m-%d', '--time-format=%H:%M:%S',
    '-o', 'json', '--no-global-config'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString()) as {
    general: { valid_requests: number; failed_requests: number; bandwidth: number };
    requests: { data: { data: string; hits: { count: number } }[] };
    referring_sites: { data: { data: string; hits: { count: number } }[] };
    vhosts: { data: { data: string }[] };
  };
  t.equal(report.general.valid_requests, 3);
  t.equal(report.general.failed_requests, 0);
  t.same(report.requests.data.map((r) => [r.data, r.hits.count]).sort(), [['/p1', 2], ['/p2', 1]], 'the paths, no `?-` for an absent query');
  t.same(report.referring_sites.data.map((r) => [r.data, r.hits.count]).sort(), [['one.example', 2], ['two.example', 1]]);
  t.equal(report.general.bandwidth, sizes.reduce((a, b) => a + b), 'sc-bytes: every byte of the answers');
  t.same(report.vhosts.data.map((v) => v.data), ['ga.test']);
});

/** The keys that occur twice in one object of a JSON text (JSON.parse keeps the last silently). */
function duplicateKeys(json: string): string[] {
  const dups: string[] = [];
  const objects: Set<string>[] = [];
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '{') objects.push(new Set());
    else if (c === '}') objects.pop();
    else if (c === '"') {
      let j = i + 1;
      while (j < json.length && json[j] !== '"') j += json[j] === '\\' ? 2 : 1;
      const key = json.slice(i, j + 1);
      i = j;
      if (/^\s*:/.test(json.slice(j + 1, j + 4))) {
        const top = objects[objects.length - 1]!;
        if (top.has(key)) dups.push(key);
        top.add(key);
      }
    }
  }
  return dups;
}

t.test('system log lines are JSON objects with unique keys; the supervisor\'s name its role once', async (t) => {
  const json = server.logs.filter((l) => l.startsWith('{'));
  t.ok(json.length > 3, 'the node logged its start');
  t.same(json.filter((l) => duplicateKeys(l).length > 0), [], 'no line with a key twice');
  // The supervisor logs only on restarts and failures: its module is loaded as `svc start` loads it.
  const script = `await import(${JSON.stringify(path.join(projectRoot, 'dist/lib/supervisor/supervisor.js'))});` +
    `const { systemLog } = await import(${JSON.stringify(path.join(projectRoot, 'dist/lib/log/system-log.js'))});` +
    `systemLog.info({ x: 1 }, 'probe'); systemLog.flush();`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script]).toString().trim();
  t.same(duplicateKeys(out), [], out);
  t.equal((JSON.parse(out) as { role: string }).role, 'supervisor');
});
