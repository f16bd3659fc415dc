// The metrics log in-process on an injected clock: file names and directories, compression, the
// capacity of rolling and retention, and no partial snapshot left behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { parseCron } from '../../lib/log/global/cron.js';
import { MetricsLog, type MetricsLogOptions } from '../../lib/log/global/metrics-log.js';

const T0 = Date.UTC(2026, 10, 24, 23, 55, 0);

function setup(t: { teardown(fn: () => void): void }, o: Partial<MetricsLogOptions>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-metrics-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const errors: Error[] = [];
  let n = 0;
  const log = new MetricsLog({
    dir, cron: parseCron('0 */5 * * * *'), retention: 10, compression: false, text: () => `svc_requests_total ${n++}\n`,
    onError: (e) => errors.push(e), ...o,
  });
  const tree = (): string[] => fs.readdirSync(dir).sort().flatMap((d) => fs.readdirSync(path.join(dir, d)).sort().map((f) => `${d}/${f}`));
  return { dir, log, errors, tree };
}

t.test('each snapshot is its own file in the directory of its day, named to the second', async (t) => {
  const { dir, log, tree, errors } = setup(t, {});
  await log.snapshot(T0);
  await log.snapshot(T0 + 5 * 60_000);
  t.same(tree(), ['metrics_20261124/metrics_20261124235500.log', 'metrics_20261125/metrics_20261125000000.log']);
  t.equal(fs.readFileSync(path.join(dir, 'metrics_20261125/metrics_20261125000000.log'), 'utf8'), 'svc_requests_total 1\n');
  t.same(errors, []);
});

t.test('compression writes each snapshot gzipped', async (t) => {
  const { dir, log, tree } = setup(t, { compression: true });
  await log.snapshot(T0);
  t.same(tree(), ['metrics_20261124/metrics_20261124235500.log.gz']);
  t.equal(gunzipSync(fs.readFileSync(path.join(dir, tree()[0]!))).toString(), 'svc_requests_total 0\n');
});

t.test('rolling.time with retention keeps the snapshots of that many periods; emptied days go', async (t) => {
  const { log, tree } = setup(t, { timeMinutes: 1440, retention: 2 });
  for (let day = 0; day < 4; day++) await log.snapshot(T0 + day * 86_400_000);
  t.same(tree(), ['metrics_20261126/metrics_20261126235500.log', 'metrics_20261127/metrics_20261127235500.log']);
});

t.test('rolling.size with retention caps the bytes kept, oldest first', async (t) => {
  // Each snapshot is 22 bytes; 25 x 2 = 50 bytes holds two.
  const { log, tree } = setup(t, { sizeBytes: 25, retention: 2 });
  for (let i = 0; i < 5; i++) await log.snapshot(T0 + i * 1000);
  t.same(tree(), ['metrics_20261124/metrics_20261124235503.log', 'metrics_20261124/metrics_20261124235504.log']);
});

t.test('with neither, retention counts days', async (t) => {
  const { log, tree } = setup(t, { retention: 1 });
  await log.snapshot(T0);
  await log.snapshot(T0 + 60_000);
  await log.snapshot(T0 + 6 * 60_000);
  t.same(tree(), ['metrics_20261125/metrics_20261125000100.log'], 'only the current day stays');
});

t.test('a partial snapshot left by a crash is removed and never counted', async (t) => {
  const { dir, log, tree } = setup(t, {});
  fs.mkdirSync(path.join(dir, 'metrics_20261124'));
  fs.writeFileSync(path.join(dir, 'metrics_20261124/metrics_20261124235000.log.tmp'), 'half');
  await log.snapshot(T0);
  t.same(tree(), ['metrics_20261124/metrics_20261124235500.log']);
});

t.test('a directory that cannot be written reports the error and writes nothing', async (t) => {
  const { dir, log, errors } = setup(t, {});
  const blocked = path.join(dir, 'blocked');
  fs.writeFileSync(blocked, 'in the way');
  const other = new MetricsLog({ dir: blocked, cron: parseCron('* * * * * *'), retention: 1, compression: false, text: () => 'x\n', onError: (e) => errors.push(e) });
  await other.snapshot(T0);
  await log.close();
  t.equal(errors.length, 1);
  t.match(errors[0]!.message, /ENOTDIR|EEXIST/);
});
