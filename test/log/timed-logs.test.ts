// The primary's timed records in-process, on a short monitoring period: each host with the
// monitoring log on gets its 5-minute VirtualHost record in its form, a host with it off none;
// the system log's first record; metrics snapshots on their cron.
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { parseSetting } from '../../lib/setting-check/load.js';
import { GlobalLogs } from '../../lib/log/global/global-logs.js';
import { LogHub } from '../../lib/log/hub.js';
import { StatsAggregator } from '../../lib/stats/aggregate.js';
import { SystemSampler } from '../../lib/stats/system.js';
import { TimedLogs } from '../../lib/primary/timed-logs.js';
import { until } from '../helpers/wait.js';

// A port already taken: the listener cannot bind it and says so instead of stopping anything.
const holder = dgram.createSocket('udp4');
await new Promise<void>((r) => holder.bind(0, '127.0.0.1', () => r()));
const busy = holder.address().port;
t.teardown(() => holder.close());
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-timed-'));
t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
const host = (name: string, monitoring: Record<string, unknown>) => ({
  name, origin: { address: ['127.0.0.1:8080'] }, functions: { operations: { log: { monitoring } } },
});
const setting = parseSetting({
  env: { home, log: { meta: { port: busy }, system: { enable: true }, metrics: { schedule: '* * * * * *' } } },
  functions: { operations: { log: { meta: { dir: 'logs' }, access: { enable: false }, origin: { enable: false }, dns: { enable: false } } } },
  hosting: [host('j.test', { enable: true }), host('x.test', { enable: true, form: 'xml' }), host('off.test', { enable: false })],
}, { baseDir: home });
const logs = new GlobalLogs(setting);
const hub = new LogHub((file, err) => logs.failed(file, err));
hub.configure(setting, home);
const stats = new StatsAggregator();
const sampler = new SystemSampler(() => [process.pid], () => []);
sampler.sample();
const timed = new TimedLogs({
  setting: () => setting, baseDir: home, logs, hub, monitoringEveryMs: 200,
  stats: { stats, version: 'test', name: 'node-1', state: () => 'Healthy', hosts: () => ['j.test', 'x.test', 'off.test'], system: () => sampler.get(), metricsGroup: () => undefined,
    managementAccess: () => ({ Allow: 0, Deny: 0 }), census: () => undefined, directoryStats: () => undefined },
});
t.equal(await timed.start(), undefined);
t.teardown(async () => { await timed.close(); await hub.close(); await logs.close(); });

const lines = (file: string): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : []);

t.test('each host with the monitoring log on gets its VirtualHost record in its form', async (t) => {
  const j = path.join(home, 'logs', 'j.test', 'monitoring.log');
  const x = path.join(home, 'logs', 'x.test', 'monitoring.log');
  await until(() => lines(j).length >= 2 && lines(x).length >= 2, 'two records each');
  const rec = JSON.parse(lines(j)[0]!) as Record<string, unknown>;
  t.match(rec, { Date: /^\d{4}-\d\d-\d\d$/, Time: /^\d\d:\d\d:\d\d$/, Name: 'j.test' });
  t.ok('ClientTraffic' in rec, 'the whole VirtualHost entry of the 5-minute document');
  t.match(lines(x)[0], /^<VirtualHost Date="[\d-]+" Time="[\d:]+" Name="x\.test" .*<\/VirtualHost>$/);
  t.notOk(fs.existsSync(path.join(home, 'logs', 'off.test', 'monitoring.log')), 'none for a host with it off');
});

t.test('the system log has its first record at start; metrics snapshots follow their cron', async (t) => {
  const svclog = path.join(home, 'svclog');
  await until(() => lines(path.join(svclog, 'system.log')).length >= 1, 'the system record');
  t.match(lines(path.join(svclog, 'system.log'))[0], /^\S+ \S+ Healthy \{"CPU":/);
  await until(() => fs.readdirSync(svclog).some((d) => d.startsWith('metrics_')), 'a metrics snapshot', 5000);
  await logs.flush();
  t.ok(lines(path.join(svclog, 'error.log')).some((l) => / 4002 - - - \[Error\] log listener cannot listen: 127\.0\.0\.1:\d+ udp: /.test(l)), 'the listener failure is in the error log');
});
