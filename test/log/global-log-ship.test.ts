// The global logs go to backup repositories like the host logs: a rolled error log, on an
// injected clock, reaches a real S3-compatible server (s3rver) at a path naming its logtype and
// the domain `global`; a rolled watch log becomes counters per event code in the real statsd
// daemon; the metrics snapshots ship as a unit and retention keeps them until then; the
// primary's sources name every log that is backed up, with what to.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { parseCron } from '../../lib/log/cron.js';
import { GlobalLogs } from '../../lib/log/global/global-logs.js';
import { MetricsLog } from '../../lib/log/global/metrics-log.js';
import { BackupScheduler, type AttemptBody } from '../../lib/log/repository/scheduler.js';
import { parseSetting } from '../../lib/setting-check/load.js';
import { startS3, S3_KEYS } from '../helpers/s3.js';
import { startStatsd } from '../helpers/statsd.js';
import { until } from '../helpers/wait.js';

const T0 = Date.UTC(2026, 10, 24, 9, 58, 30);
const s3 = await startS3(['edge-logs']);
t.teardown(() => s3.stop());

function setup(t: { teardown(fn: () => void | Promise<void>): void }, log: Record<string, unknown>, more: Record<string, unknown>[] = []) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-glog-ship-'));
  const setting = parseSetting({
    meta: { group: 'edge-kr' },
    env: { home, log: {
      meta: { dir: 'logs' },
      repository: { list: [{ name: 's3', type: 'cloudA-objstore', rolling: '* *', path: '{group}/{logtype}/{domain}/{timestamp}.log',
        endpoint: { bucket: 'edge-logs', region: 'us-east-1', domain: s3.url, ...S3_KEYS } }, ...more] },
      ...log,
    } },
    hosting: [],
  });
  const clock = { ms: T0 };
  const logs = new GlobalLogs(setting, { now: () => clock.ms, stderr: () => undefined });
  const attempts: AttemptBody[] = [];
  const scheduler = new BackupScheduler({ watch: (event, body) => { if (event === '00030004') attempts.push(body as AttemptBody); }, now: () => clock.ms });
  t.teardown(async () => {
    scheduler.close();
    await scheduler.idle();
    await logs.close();
    fs.rmSync(home, { recursive: true, force: true });
  });
  return { setting, clock, logs, scheduler, attempts, home, dir: path.join(home, 'logs') };
}

t.test('a rolled error log reaches the S3 store at its path, logtype error and domain global', async (t) => {
  const { setting, clock, logs, scheduler, attempts, dir } = setup(t, { error: { enable: true, rolling: { time: 1 }, backup: ['s3'] } });
  scheduler.configure(setting, logs.backupSources(setting));
  logs.error({ code: '5001', detail: 'worker 0 (pid 1) signal SIGKILL; replacing it' });
  await logs.flush();
  clock.ms += 60_000;
  await logs.tick();
  await logs.flush();
  const fireAt = Date.UTC(2026, 10, 24, 10, 0, 0);
  await scheduler.fire('s3', fireAt);
  t.same(attempts.map((a) => [a.name, a.path, a.error]), [['s3', 'edge-kr/error/global/20261124100000.log', null]]);
  t.same((await s3.get('edge-logs', 'edge-kr/error/global/20261124100000.log')).toString(),
    '2026-11-24 09:58:30 5001 - - - [Alert] worker died: worker 0 (pid 1) signal SIGKILL; replacing it\n', 'the rolled lines, whole');
  t.ok(fs.existsSync(path.join(dir, '.backup', 'error.s3.json')), 'what was shipped is recorded beside the log');
  await scheduler.fire('s3', fireAt + 60_000);
  t.equal(attempts.length, 1, 'a file is shipped once: nothing new, no upload');
});

t.test('a rolled watch log becomes statsd counters per exported event code, under the domain global', async (t) => {
  const statsd = await startStatsd();
  t.teardown(() => statsd.stop());
  const sd = { name: 'sd', type: 'statsd', rolling: '* *', path: '/', endpoint: { port: statsd.port, exports: { enable: true, matchingList: ['^0002'] } } };
  const { setting, clock, logs, scheduler, attempts } = setup(t, { watch: { rolling: { time: 1 }, backup: ['sd'] } }, [sd]);
  scheduler.configure(setting, logs.backupSources(setting));
  await logs.watch('00020001', 'a.com', {});
  await logs.watch('00020001', 'b.com', {});
  await logs.watch('00020003', 'a.com', {});
  await logs.watch('00010001', undefined, {});
  clock.ms += 60_000;
  await logs.tick();
  await logs.flush();
  await scheduler.fire('sd');
  t.same(attempts.map((a) => [a.name, a.error]), [['sd', null]]);
  await until(() => statsd.counters().get('svc.watch.global.00020001') === 2 && statsd.counters().get('svc.watch.global.00020003') === 1,
    'statsd counted the exported watch events by code', 15_000);
  t.notOk(statsd.counters().has('svc.watch.global.00010001'), 'an event the filter leaves out is not sent');
});

t.test('metrics snapshots reach the S3 store as one unit in time order, kept beyond retention until shipped', async (t) => {
  const { setting, clock, scheduler, attempts, home } = setup(t, { metrics: { backup: ['s3'] } });
  const dir = path.join(home, 'metrics');
  let n = 0;
  const metrics = new MetricsLog({
    dir, cron: parseCron('0 * * * * *'), timeMinutes: 1, retention: 1, compression: true,
    text: () => `svc_snapshot ${++n}\n`, now: () => clock.ms, onError: (err) => t.error(err),
  });
  t.teardown(() => metrics.close());
  scheduler.configure(setting, [{ file: metrics, dir, base: 'metrics', logtype: 'metrics', domain: 'global', repositories: ['s3'] }]);
  const snapshots = (): string[] => fs.readdirSync(dir).filter((d) => d.startsWith('metrics_')).flatMap((d) => fs.readdirSync(path.join(dir, d)).map((f) => `${d}/${f}`)).sort();
  const t1 = Date.UTC(2026, 10, 24, 10, 1, 0);
  await metrics.snapshot(Date.UTC(2026, 10, 24, 10, 0, 0));
  clock.ms = t1;
  await metrics.snapshot(t1);
  t.same(snapshots(), ['metrics_20261124/metrics_20261124100000.log.gz', 'metrics_20261124/metrics_20261124100100.log.gz'], 'retention 1 keeps both: neither is shipped yet');
  await scheduler.fire('s3', Date.UTC(2026, 10, 24, 10, 2, 0));
  t.same(attempts.map((a) => [a.path, a.error]), [['edge-kr/metrics/global/20261124100200.log', null]]);
  t.equal((await s3.get('edge-logs', 'edge-kr/metrics/global/20261124100200.log')).toString(), 'svc_snapshot 1\nsvc_snapshot 2\n', 'both snapshots, gunzipped, oldest first');
  t.same(snapshots(), ['metrics_20261124/metrics_20261124100100.log.gz'], 'once shipped, retention applies again');
});

t.test('the global logs name what each is backed up to: logtype the log, domain global, only those that name a repository', async (t) => {
  const { setting, logs, dir } = setup(t, {
    info: { rolling: { time: 10 }, backup: ['s3'] }, watch: { rolling: { size: 1 } }, error: { enable: true, rolling: { size: 1 }, backup: ['s3'] },
  });
  t.same(logs.backupSources(setting).map((s) => ({ dir: s.dir, base: s.base, logtype: s.logtype, domain: s.domain, repositories: s.repositories })), [
    { dir, base: 'info', logtype: 'info', domain: 'global', repositories: ['s3'] },
    { dir, base: 'error', logtype: 'error', domain: 'global', repositories: ['s3'] },
  ]);
});
