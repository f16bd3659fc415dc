// The global logs in-process on an injected clock: the error log's line, levels and patterns,
// info and watch rolled and compressed by the access log's roller, and a log that cannot be
// written reported once a minute (in the error log, or on stderr when it is the error log).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { parseSetting } from '../../lib/setting-check/load.js';
import { GlobalLogs } from '../../lib/log/global/global-logs.js';
import { WATCH, setWatchSink, writeWatchEvent, type BackupAttempt } from '../../lib/log/global/watch-events.js';

const T0 = Date.UTC(2026, 10, 24, 9, 58, 30);

function setup(t: { teardown(fn: () => void): void }, log: Record<string, unknown>) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-glog-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  const setting = parseSetting({ env: { home, log: { meta: { dir: 'logs' }, ...log } }, hosting: [{ name: 'a.com', origin: { address: ['127.0.0.1:8080'] } }] });
  const clock = { ms: T0 };
  const stderr: string[] = [];
  const logs = new GlobalLogs(setting, { now: () => clock.ms, stderr: (l) => stderr.push(l) });
  t.teardown(() => logs.close());
  const dir = path.join(home, 'logs');
  const read = (name: string): string[] => fs.readFileSync(path.join(dir, name), 'utf8').split('\n').filter((l) => l !== '');
  return { home, dir, clock, stderr, logs, read };
}

t.test('an error line has date, time, code, vhost, url, x-ctx-id and the message with its level', async (t) => {
  const { logs, read } = setup(t, {});
  logs.error({ code: '2001', vhost: 'a.com', url: '/x y?q=1', ctxId: 'c-1', detail: 'Connect-Timeout 10.0.0.1:80' });
  logs.error({ code: '5001', detail: 'worker 0 (pid 1) signal SIGKILL; replacing it' });
  await logs.flush();
  t.same(read('error.log'), [
    '2026-11-24 09:58:30 2001 a.com /x+y?q=1 c-1 [Error] origin transaction failed: Connect-Timeout 10.0.0.1:80',
    '2026-11-24 09:58:30 5001 - - - [Alert] worker died: worker 0 (pid 1) signal SIGKILL; replacing it',
  ]);
});

t.test('minLevel keeps the lines at or above its severity only', async (t) => {
  const { logs, read } = setup(t, { error: { filter: { minLevel: 'Warning' } } });
  logs.error({ code: '4003', detail: 'a Notice' });
  logs.error({ code: '2003', detail: 'a Warning' });
  logs.error({ code: '3002', detail: 'a Critical' });
  await logs.flush();
  t.same(read('error.log').map((l) => l.split(' ')[2]), ['2003', '3002']);
});

t.test('include keeps the matching lines, then exclude drops from them, over the whole line', async (t) => {
  const { logs, read } = setup(t, { error: { filter: { patterns: { include: ['^\\S+ \\S+ 20', 'worker'], exclude: ['b\\.com'] } } } });
  logs.error({ code: '2001', vhost: 'a.com', detail: 'kept: origin code' });
  logs.error({ code: '2003', vhost: 'b.com', detail: 'excluded host' });
  logs.error({ code: '5001', detail: 'worker 1: kept by its text' });
  logs.error({ code: '3001', detail: 'not included' });
  await logs.flush();
  t.same(read('error.log').map((l) => l.split(' ')[2]), ['2001', '5001']);
});

t.test('watch events of every group, the backup scheduler ones through writeWatchEvent', async (t) => {
  const { logs, read } = setup(t, {});
  setWatchSink((e, vhost, body) => void logs.watch(e, vhost, body));
  t.teardown(() => setWatchSink(undefined));
  await logs.watch(WATCH.hostAdded, 'a.com', { name: 'a.com' });
  writeWatchEvent(WATCH.backupStarted, { repository: { list: [] } });
  const attempt: BackupAttempt = { name: 'r1', date: '2026-11-24', time: '09:58:30', path: 'x/y.gz', bytes: 12, error: null };
  writeWatchEvent(WATCH.backupTried, attempt);
  await logs.flush();
  t.same(read('watch.log'), [
    '2026-11-24 09:58:30 00020001 a.com {"name":"a.com"}',
    '2026-11-24 09:58:30 00030001 - {"repository":{"list":[]}}',
    '2026-11-24 09:58:30 00030004 - {"name":"r1","date":"2026-11-24","time":"09:58:30","path":"x/y.gz","bytes":12,"error":null}',
  ]);
});

t.test('info and watch roll by time, gzip what rolled and keep their retention', async (t) => {
  const { dir, clock, logs } = setup(t, {
    info: { rolling: { time: 10 }, compression: true, retention: 2 },
    watch: { rolling: { time: 10 }, retention: 3 },
  });
  for (let i = 0; i < 4; i++) {
    await logs.info(`message ${i}`);
    await logs.watch(WATCH.started, undefined, { i });
    clock.ms += 10 * 60_000;
    await logs.tick();
  }
  await logs.flush();
  const files = fs.readdirSync(dir).sort();
  t.same(files.filter((f) => f.startsWith('info')), ['info_20261124_1020.log.gz', 'info_20261124_1030.log']);
  t.same(files.filter((f) => f.startsWith('watch')), ['watch_20261124_1010.log', 'watch_20261124_1020.log', 'watch_20261124_1030.log']);
  t.match(gunzipSync(fs.readFileSync(path.join(dir, 'info_20261124_1020.log.gz'))).toString(), /^2026-11-24 10:28:30 message 3 \{\}\n$/);
});

t.test('an unwritable log is reported once a minute in the error log; the others go on', async (t) => {
  const { home, dir, clock, logs, read } = setup(t, { info: { dir: 'blocked' } });
  fs.writeFileSync(path.join(home, 'blocked'), 'a file in the way of the directory');
  for (let i = 0; i < 5; i++) await logs.info(`lost ${i}`);
  clock.ms += 30_000;
  await logs.info('still lost');
  await logs.watch(WATCH.started, undefined, {});
  await logs.flush();
  let errors = read('error.log');
  t.equal(errors.length, 1, 'one report within the minute');
  t.match(errors[0], /^2026-11-24 09:58:30 4001 - - - \[Error\] log file cannot be written; its lines are dropped: .*blocked\/info\.log: .*ENOTDIR|EEXIST/);
  t.equal(read('watch.log').length, 1, 'the watch log is written');
  clock.ms += 31_000;
  await logs.info('lost again');
  await logs.flush();
  errors = read('error.log');
  t.equal(errors.length, 2, 'reported again after a minute');
  t.ok(fs.existsSync(dir));
});

t.test('when the error log itself cannot be written the report goes to stderr, once a minute', async (t) => {
  const { home, clock, stderr, logs } = setup(t, { error: { dir: 'blocked' } });
  fs.writeFileSync(path.join(home, 'blocked'), 'in the way');
  for (let i = 0; i < 5; i++) {
    logs.error({ code: '2001', detail: `event ${i}` });
    await logs.flush();
  }
  t.equal(stderr.length, 1);
  t.match(stderr[0], /^2026-11-24 09:58:30 4001 log file cannot be written; its lines are dropped: .*blocked\/error\.log/);
  clock.ms += 60_000;
  logs.error({ code: '2001', detail: 'later' });
  await logs.flush();
  t.equal(stderr.length, 2);
});
