// Shipping rolled access-log files to a real S3-compatible server (s3rver on loopback): one
// object per unit at the expanded path, nothing shipped twice, a failed upload retried and its
// files kept beyond retention until they are shipped, instance-role credentials from a stand-in
// of the instance-metadata endpoint.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { BackupScheduler } from '../../lib/log/repository/scheduler.js';
import { startS3, S3_KEYS } from '../helpers/s3.js';
import { until } from '../helpers/wait.js';
import { shipFixture, T0 } from './fixtures/ship.js';

const s3 = await startS3(['logs']);
t.teardown(() => s3.stop());

const endpoint = (keys = S3_KEYS) => ({ bucket: 'logs', region: 'us-east-1', domain: s3.url, ...keys });

t.test('each unit of rolled files becomes one gzipped object at its expanded path, and nothing is sent twice', async (t) => {
  const f = shipFixture(t);
  f.configure({ type: 'cloudA-objstore', path: '/{group}/{logtype}/{domain}/{hostname}-{timestamp}.log.gz', compression: { enable: true }, endpoint: endpoint() });
  t.equal(f.events[0]?.event, '00030001', 'the scheduler start is a watch event');
  await f.roll(['a1', 'a2']);
  await f.roll(['b1']);
  f.file.write('current\n');
  await f.file.flush();
  await f.scheduler.fire('r');
  const keys = await s3.list('logs');
  t.equal(keys.length, 1, `one object (${keys.join(' ')})`);
  t.match(keys[0], /^edge-kr\/access\/www\.example\.com\/[^/]+-20261124090200\.log\.gz$/);
  t.equal(gunzipSync(await s3.get('logs', keys[0]!)).toString(), 'a1\na2\nb1\n', 'both rolled files in order; the current file waits');
  const [a] = f.attempts();
  t.match(a, { name: 'r', date: '2026-11-24', time: '09:02:00', path: keys[0], error: null });
  t.ok(a!.bytes > 0, 'the bytes sent');

  await f.scheduler.fire('r');
  t.equal(f.attempts().length, 1, 'no new rolled file: no upload');
  await f.roll(['current-2']);
  f.clock.ms += 30_000;
  await f.scheduler.fire('r');
  const after = await s3.list('logs');
  t.equal(after.length, 2);
  t.equal(gunzipSync(await s3.get('logs', after[1]!)).toString(), 'current\ncurrent-2\n', 'only the new file');
});

t.test('a failed upload is retried with back-off and its files outlive retention until shipped', async (t) => {
  const f = shipFixture(t, { retention: 2, retryMs: 20 });
  f.configure({ type: 'cloudA-objstore', path: 'fail/{timestamp}.log', endpoint: endpoint({ accessKey: 'WRONG', secretKey: 'x' }) });
  for (let i = 0; i < 4; i++) await f.roll([`line${i}`]);
  await f.scheduler.fire('r');
  await until(() => f.attempts().length >= 3, 'three failed attempts from one firing');
  t.ok(f.attempts().every((a) => a.error !== null && /403 InvalidAccessKeyId/.test(a.error)), 'each attempt names the failure');
  t.ok(f.attempts().every((a) => a.bytes === 0 && a.path === `fail/${new Date(T0 + 4 * 60_000).toISOString().replace(/[-:T]/g, '').slice(0, 14)}.log`));
  await f.roll(['line4']);
  t.equal(f.ls().filter((n) => n.endsWith('.gz')).length, 5, 'retention 2, yet every unshipped rolled file is kept');

  // The key fixed: the next attempt ships everything held, then retention applies.
  f.configure({ type: 'cloudA-objstore', path: 'fixed/{timestamp}.log', endpoint: endpoint() });
  await f.scheduler.fire('r');
  await f.scheduler.idle();
  const keys = (await s3.list('logs')).filter((k) => k.startsWith('fixed/'));
  t.equal(keys.length, 1);
  t.equal((await s3.get('logs', keys[0]!)).toString(), 'line0\nline1\nline2\nline3\nline4\n', 'no line lost');
  await f.file.flush();
  t.equal(f.ls().length, 2, `retention applies once shipped (${f.ls().join(' ')})`);
  t.equal(f.attempts().at(-1)!.error, null);
});

t.test('#IAMROLE takes the credentials of the instance role from the metadata endpoint (IMDSv2)', async (t) => {
  const seen: string[] = [];
  const imds = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.method === 'PUT' && req.url === '/latest/api/token' && req.headers['x-aws-ec2-metadata-token-ttl-seconds'] !== undefined) return void res.end('TOKEN-1');
    if (req.headers['x-aws-ec2-metadata-token'] !== 'TOKEN-1') { res.statusCode = 401; return void res.end(); }
    if (req.url === '/latest/meta-data/iam/security-credentials/') return void res.end('edge-role\n');
    if (req.url === '/latest/meta-data/iam/security-credentials/edge-role') {
      return void res.end(JSON.stringify({ Code: 'Success', AccessKeyId: S3_KEYS.accessKey, SecretAccessKey: S3_KEYS.secretKey, Token: 'SESSION', Expiration: new Date(Date.now() + 3_600_000).toISOString() }));
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => imds.listen(0, '127.0.0.1', r));
  process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = `http://127.0.0.1:${(imds.address() as AddressInfo).port}`;
  t.teardown(() => { delete process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT; imds.close(); });

  const f = shipFixture(t);
  f.configure({ type: 'cloudA-objstore', path: 'role/{timestamp}.log', endpoint: endpoint({ accessKey: '#IAMROLE', secretKey: '#IAMROLE' }) });
  await f.roll(['by-role']);
  await f.scheduler.fire('r');
  t.equal(f.attempts()[0]?.error, null);
  t.same(seen, ['PUT /latest/api/token', 'GET /latest/meta-data/iam/security-credentials/', 'GET /latest/meta-data/iam/security-credentials/edge-role']);
  t.equal((await s3.get('logs', (await s3.list('logs')).find((k) => k.startsWith('role/'))!)).toString(), 'by-role\n');
  await f.roll(['again']);
  await f.scheduler.fire('r');
  t.equal(seen.length, 3, 'credentials reused until they near their expiry');
});

t.test('a cloudD repository uploads through the S3 API to its endpoint', async (t) => {
  const f = shipFixture(t);
  f.configure({ type: 'cloudD-object-storage-v1', path: 'd/{domain}/{timestamp.date}.log', endpoint: { bucket: 'logs', region: 'kr', account: 'proj-1', domain: s3.url, ...S3_KEYS } });
  await f.roll(['to-d']);
  await f.scheduler.fire('r');
  t.equal(f.attempts()[0]?.error, null);
  t.equal((await s3.get('logs', 'd/www.example.com/20261124.log')).toString(), 'to-d\n');
});

t.test('after a restart what a repository received is not sent again, and what it had not is', async (t) => {
  const f = shipFixture(t);
  f.configure({ type: 'cloudA-objstore', path: 'restart/{timestamp}.log', endpoint: endpoint() });
  await f.roll(['before']);
  await f.scheduler.fire('r');
  await f.roll(['during']);
  // A new scheduler over the same log directory, as after a restart of the node.
  const again = new BackupScheduler({ watch: () => undefined, now: () => f.clock.ms });
  t.teardown(() => again.close());
  again.configure(f.configure({ type: 'cloudA-objstore', path: 'restart/{timestamp}.log', endpoint: endpoint() }), [f.source]);
  f.clock.ms += 1000;
  await again.fire('r');
  const keys = (await s3.list('logs')).filter((k) => k.startsWith('restart/'));
  t.equal(keys.length, 2);
  t.same(await Promise.all(keys.map(async (k) => (await s3.get('logs', k)).toString())), ['before\n', 'during\n']);
});

t.test('a repository firing on the minute a time-rolled log ends ships that minute\'s file at once, not at its next time', async (t) => {
  const f = shipFixture(t);
  f.configure({ type: 'cloudA-objstore', path: '/{group}/{logtype}/{domain}/ended-{timestamp}.log.gz', compression: { enable: true }, endpoint: endpoint() });
  f.file.write('last line of the minute\n');
  await f.file.flush();
  // The minute ends; the repository's cron fires before the log's own roll timer has run.
  f.clock.ms += 60_000;
  await f.scheduler.fire('r');
  const keys = (await s3.list('logs')).filter((k) => k.includes('/ended-'));
  t.equal(keys.length, 1, `the file of the minute that ended is shipped (${keys.join(' ')})`);
  t.equal(gunzipSync(await s3.get('logs', keys[0]!)).toString(), 'last line of the minute\n');
});
