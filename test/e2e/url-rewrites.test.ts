// Black-box: hosting[].urlRewrites through the real server, with a scripted origin that records
// the path and Host it was asked for. Each condition kind of document 2, negation, case
// sensitivity, re-routing to another host, the 10-routing limit, accessLogUrl and the counter.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const at = (p: string): string => `127.0.0.1:${origin.port}${p}`;
const server = await startServer([
  {
    name: 'a.com', aliases: ['xa.com'], listen: `127.0.0.1:${port}`, origin: { address: [at('/a')] },
    urlRewrites: [
      { pattern: '$URL[^a\\.com/old/(.*)]', replace: '/new/#1', accessLogUrl: 'replace' },
      { pattern: '$URL[^a\\.com/move/(.*)]', replace: 'b.com/moved/#1' },
      { pattern: '$URL[^a\\.com/img/(.*)\\.(jpg|png)$] & !IP[127.0.0.9]', replace: '/images/#2/#1' },
      { pattern: '$URL[^a\\.com/Case/(.*)]', replace: '/case-matched/#1' },
      { pattern: '$URL[^a\\.com/nocase/(.*)]', replace: '/nocase-matched/#1', caseSensitive: false },
      { pattern: '$URLMATCH[^a\\.com/static/] & $METHOD[POST;PUT]', replace: '/static-write' },
      { pattern: '$URL[^a\\.com/hdr/(.*)] & $HEADER[X-Beta: yes]', replace: '/beta/#1' },
      { pattern: '$URL[^a\\.com/present/(.*)] & $HEADER[X-Flag]', replace: '/flagged/#1' },
      { pattern: '$URL[^a\\.com/empty/(.*)] & $HEADER[X-Flag:]', replace: '/empty-flag/#1' },
      { pattern: '$URL[^a\\.com/loop/(.*)]', replace: 'c.com/loop/#1' },
      { pattern: '$URL[^a\\.com/whole$]', replace: '/w?of=#0' },
      { pattern: '$URL[^a\\.com/https/(.*)] & $PROTOCOL[https]', replace: '/tls/#1' },
      { pattern: '$URL[^a\\.com/fn/(.*)] & $FUNCTION[*]', replace: '/function/#1' },
      { pattern: '$URL[^a\\.com/step1/(.*)]', replace: '/step2/#1' },
      { pattern: '$URL[^a\\.com/step2/(.*)]', replace: '/step3/#1' },
    ],
    functions: { operations: { log: { access: { loopback: true } } } },
  },
  { name: 'b.com', listen: `127.0.0.1:${port}`, origin: { address: [at('/b')] } },
  {
    name: 'c.com', listen: `127.0.0.1:${port}`, origin: { address: [at('/c')] },
    urlRewrites: [{ pattern: '$URL[^c\\.com/loop/(.*)]', replace: 'a.com/loop/#1' }],
  },
], { extra: { functions: { operations: { log: { meta: { dir: 'logs' } } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); });

interface Answer { status: number; body: string }
function send(path: string, opts: { host?: string; method?: string; headers?: Record<string, string>; from?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, path, method: opts.method ?? 'GET', localAddress: opts.from ?? '127.0.0.1',
      headers: { host: opts.host ?? 'a.com', connection: 'close', ...opts.headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('a URL[...] capture is substituted into replace (#1) and the origin gets the new path', async (t) => {
  const r = await send('/old/x/y.html?q=1');
  t.equal(r.status, 200);
  t.equal(r.body, 'origin:GET /a/new/x/y.html?q=1');
});

t.test('a replace naming another host routes the request to that host', async (t) => {
  const r = await send('/move/thing');
  t.equal(r.body, 'origin:GET /b/moved/thing', 'b.com\'s origin address and the rewritten path');
  t.equal(origin.seen.at(-1)!.headers.host, `b.com:${origin.port}`, 'the origin is asked for b.com');
});

t.test('several groups (#1, #2) and a negated IP condition', async (t) => {
  t.equal((await send('/img/cat.jpg')).body, 'origin:GET /a/images/jpg/cat');
  t.equal((await send('/img/cat.jpg', { from: '127.0.0.9' })).body, 'origin:GET /a/img/cat.jpg', '!IP[127.0.0.9] keeps that client out');
  t.equal((await send('/img/cat.gif')).body, 'origin:GET /a/img/cat.gif', 'no match: the URL is unchanged');
});

t.test('caseSensitive: true by default; false matches any case', async (t) => {
  t.equal((await send('/Case/1')).body, 'origin:GET /a/case-matched/1');
  t.equal((await send('/case/1')).body, 'origin:GET /a/case/1', 'a different case does not match');
  t.equal((await send('/NoCase/2')).body, 'origin:GET /a/nocase-matched/2');
});

t.test('without a URL condition replace is used as written; METHOD lists methods', async (t) => {
  t.equal((await send('/static/f.css', { method: 'POST' })).body, 'origin:POST /a/static-write');
  t.equal((await send('/static/f.css')).body, 'origin:GET /a/static/f.css', 'GET is not in METHOD[POST;PUT]');
});

t.test('HEADER conditions: a value pattern, presence, an empty value', async (t) => {
  t.equal((await send('/hdr/1', { headers: { 'x-beta': 'yes' } })).body, 'origin:GET /a/beta/1');
  t.equal((await send('/hdr/1', { headers: { 'x-beta': 'yess' } })).body, 'origin:GET /a/hdr/1');
  t.equal((await send('/present/2', { headers: { 'x-flag': 'anything' } })).body, 'origin:GET /a/flagged/2');
  t.equal((await send('/present/2')).body, 'origin:GET /a/present/2');
  t.equal((await send('/empty/3', { headers: { 'x-flag': '' } })).body, 'origin:GET /a/empty-flag/3');
  t.equal((await send('/empty/3', { headers: { 'x-flag': 'v' } })).body, 'origin:GET /a/empty/3');
});

t.test('#0 is the whole URL the pattern saw (host and path)', async (t) => {
  t.equal((await send('/whole')).body, 'origin:GET /a/w?of=a.com/whole');
});

t.test('PROTOCOL and FUNCTION conditions do not match a plain request without function calls', async (t) => {
  t.equal((await send('/https/1')).body, 'origin:GET /a/https/1');
  t.equal((await send('/fn/1')).body, 'origin:GET /a/fn/1');
});

t.test('a rewritten URL is routed again: rules apply in turn until none matches', async (t) => {
  t.equal((await send('/step1/z')).body, 'origin:GET /a/step3/z');
});

t.test('a ^-anchored host pattern does not match a longer host name', async (t) => {
  t.equal((await send('/old/x', { host: 'xa.com' })).body, 'origin:GET /a/old/x');
});

t.test('more than 10 routings end the request with 508 and say why', async (t) => {
  const before = origin.seen.length;
  const r = await send('/loop/x');
  t.equal(r.status, 508);
  t.match(r.body, /urlRewrites rewrote this request more than 10 times/);
  t.equal(origin.seen.length, before, 'nothing reached an origin');
});

t.test('accessLogUrl replace logs the rewritten URL, else the client URL', async (t) => {
  const file = path.join(server.dir, 'logs', 'a.com', 'access.log');
  const lines = await pollUntil(async () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''),
    (s) => s.includes('/new/x/y.html') && s.includes('/img/cat.jpg'));
  t.match(lines, / \/new\/x\/y\.html q=1 /, 'the old/ rule logs with accessLogUrl replace');
  t.notMatch(lines, / \/images\/jpg\/cat /, 'the img/ rule has no accessLogUrl: the client URL is logged');
});

t.test('the URLRewrite counter counts every rewrite, in the row of the host that served', async (t) => {
  const metrics = (): Promise<string> => fetch(`http://127.0.0.1:${server.apiPort}/metrics`).then((r) => r.text());
  // a.com served: old, img, Case, NoCase, static, hdr, present, empty, whole (1 each) and step (2)
  // = 11; b.com served the moved request (1 rewrite); c.com or a.com hold the loop's 10: the
  // loop ended at a.com's 11th try, answered with no host but counted where it started.
  const m = await pollUntil(metrics, (s) => sumOf(s) === 22);
  t.equal(sumOf(m), 22, 'every rewrite is counted once');
  t.match(m, /svc_url_rewrites_total\{vhost="b.com"\} 1\n/, 'the moved request counted where it was served');
});

function sumOf(metrics: string): number {
  let n = 0;
  for (const m of metrics.matchAll(/^svc_url_rewrites_total\{vhost="[^"]*"\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}
