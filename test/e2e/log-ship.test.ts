// Black-box: the real server (2 workers) rolls the access log of real traffic by size and its
// backup scheduler ships the rolled file on the repositories' cron (every minute) to a real
// S3-compatible server (s3rver), the real statsd daemon and an HTTP log agent; each attempt is
// a watch-log event 00030004. The minute cron makes this test wait up to about two minutes.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startS3, S3_KEYS } from '../helpers/s3.js';
import { startServer } from '../helpers/server.js';
import { startStatsd } from '../helpers/statsd.js';
import { until } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
const s3 = await startS3(['edge-logs']);
const statsd = await startStatsd();
const pushes: Buffer[] = [];
const agent = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => { pushes.push(Buffer.concat(parts)); res.end(); });
});
await new Promise<void>((r) => agent.listen(0, '127.0.0.1', r));

const port = await freePort();
const server = await startServer([{ name: 'one.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], {
  workers: 2,
  extra: {
    meta: { group: 'edge-kr' },
    env: { log: { repository: { list: [
      { name: 's3', type: 'cloudA-objstore', rolling: '* *', path: '/{group}/{logtype}/{domain}/{hostname}_{timestamp}.log.gz', compression: { enable: true },
        endpoint: { bucket: 'edge-logs', region: 'us-east-1', domain: s3.url, ...S3_KEYS } },
      { name: 'sd', type: 'statsd', rolling: '* *', path: '/', endpoint: { port: statsd.port } },
      { name: 'agent', type: 'logagent', rolling: '* *', path: '{domain}', endpoint: { url: `http://127.0.0.1:${(agent.address() as AddressInfo).port}/push`, exports: { enable: true, matchingList: ['/p1\\d '] } } },
    ] } } },
    functions: { operations: { log: {
      meta: { dir: 'logs' },
      access: { loopback: true, rolling: { size: 1 }, compression: true, backup: ['s3', 'sd', 'agent'] },
      origin: { enable: false },
    } } },
  },
});
t.teardown(async () => {
  await server.stop();
  await origin.stop();
  await s3.stop();
  await statsd.stop();
  agent.close();
  fs.rmSync(server.dir, { recursive: true, force: true });
});

const dir = path.join(server.dir, 'logs', 'one.test');
const watchLines = (): string[] => {
  const f = path.join(server.dir, 'svclog', 'watch.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter((l) => l !== '') : [];
};

t.test('a rolled access log reaches the S3 store, statsd and the log agent on the repository cron', async (t) => {
  t.ok(watchLines().some((l) => / 00030001 - \{/.test(l)), 'backup scheduler started (00030001)');
  // ~7 KB per line: 200 requests are about 1.4 MB, one roll at 1 MB.
  const q = 'q'.repeat(7000);
  const dispatcher = new Agent({ connections: 4 });
  for (let i = 0; i < 200; i++) {
    const r = await request(`http://127.0.0.1:${port}/p${i}?${q}`, { headers: { host: 'one.test' }, dispatcher });
    await r.body.text();
  }
  await dispatcher.close();
  await until(() => fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.endsWith('.log.gz')), 'a rolled, gzipped access file', 15_000);
  const rolled = fs.readdirSync(dir).filter((f) => f.endsWith('.log.gz')).sort();
  const lines = rolled.flatMap((f) => gunzipSync(fs.readFileSync(path.join(dir, f))).toString().split('\n')).filter((l) => l !== '' && !l.startsWith('#'));

  const tried = () => watchLines().filter((l) => l.includes(' 00030004 ')).map((l) => JSON.parse(l.slice(l.indexOf('{'))) as Record<string, unknown>);
  await until(() => ['s3', 'sd', 'agent'].every((n) => tried().some((a) => a.name === n && a.error === null)), 'an attempt of each repository in the watch log', 150_000);
  for (const a of tried()) t.match(a, { date: /^\d{4}-\d{2}-\d{2}$/, time: /^\d{2}:\d{2}:\d{2}$/, path: String, bytes: Number }, `attempt of ${a.name as string}`);

  const keys = await s3.list('edge-logs');
  const key = keys[0]!;
  t.match(key, new RegExp(`^edge-kr/access/one\\.test/${os.hostname().replace(/[.]/g, '\\.')}_\\d{14}\\.log\\.gz$`), 'the path with its variables');
  t.equal(tried().find((a) => a.name === 's3')!.path, key, 'the event names the path');
  const body = gunzipSync(await s3.get('edge-logs', key)).toString();
  t.ok(body.startsWith('#'), 'the W3C header goes along');
  const shipped = body.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  t.same(shipped, lines.slice(0, shipped.length), 'the rolled lines, in order, whole');
  t.ok(shipped.length >= 100, `a unit of the rolled lines (${shipped.length})`);

  await until(() => (statsd.counters().get('svc.access.one_test.lines') ?? 0) >= shipped.length, 'statsd counted the shipped lines', 15_000);
  const pushed = Buffer.concat(pushes).toString().split('\n').filter((l) => l !== '');
  t.ok(pushed.length > 0 && pushed.every((l) => /\/p1\d /.test(l)), `the log agent got only the exported lines (${pushed.length})`);
  t.equal(pushed.length, shipped.filter((l) => /\/p1\d /.test(l)).length);
  t.ok(fs.existsSync(path.join(dir, '.backup')), 'what was shipped is recorded beside the log');
});
