// events.onSettingLoad.backup against a real S3-compatible store (s3rver): the package and the
// feed file land at the paths of document 2; only the named host backs up; a failing store is
// retried with back-off (injected clock) until it takes the upload.
import t from 'tap';
import { SettingBackup, type BackupOptions } from '../../lib/primary/central/backup.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { TestOrigin } from '../helpers/origin.js';
import { S3_KEYS, startS3 } from '../helpers/s3.js';
import { until } from '../helpers/wait.js';

const s3 = await startS3(['bk']);
t.teardown(() => s3.stop());
const start = Date.UTC(2026, 10, 24, 20, 5, 9);
const pkg = Buffer.from('the package bytes');

function backupTo(base: string, o: Partial<BackupOptions> = {}): { backup: SettingBackup; clock: ManualClock; logged: string[] } {
  const clock = new ManualClock(start);
  const logged: string[] = [];
  const backup = new SettingBackup({
    hostname: '', auto: true, path: '/edge/', timeoutSec: 5, clock, log: (m) => logged.push(m), pkg: async () => pkg,
    endpoint: { bucket: 'bk', region: 'us-east-1', base },
    credentials: async () => ({ accessKeyId: S3_KEYS.accessKey, secretAccessKey: S3_KEYS.secretKey }),
    ...o,
  });
  return { backup, clock, logged };
}

t.test('a setting change uploads setting_<time>.tgz under settings/<yyyy>/<mm>/ and a feed.json pointing at it', async (t) => {
  const { backup } = backupTo(s3.url);
  backup.onChange('upload');
  await backup.trigger();
  const key = 'edge/settings/2026/11/setting_20261124T200509Z.tgz';
  t.same(await s3.list('bk'), ['edge/feed.json', key]);
  t.same(await s3.get('bk', key), pkg);
  const feed = JSON.parse((await s3.get('bk', 'edge/feed.json')).toString()) as Record<string, unknown>;
  t.same(feed, {
    messageVer: '1', timestamp: '2026-11-24T20:05:09.000Z', action: { api: '/setting/upload' },
    parameters: [{ url: `${s3.url}/bk/${key}` }],
  });
});

t.test('only the node whose host name is `hostname` backs up', async (t) => {
  const other = backupTo(s3.url, { hostname: 'edge-01', self: 'edge-02', path: 'other' });
  t.equal(other.backup.active, false);
  await other.backup.trigger();
  const same = backupTo(s3.url, { hostname: 'edge-01', self: 'edge-01', path: 'same' });
  await same.backup.trigger();
  const keys = await s3.list('bk');
  t.notOk(keys.some((k) => k.startsWith('other/')));
  t.ok(keys.includes('same/feed.json'));
});

t.test('with auto false a setting change does not back up; the on-demand backup does', async (t) => {
  const { backup, logged } = backupTo(s3.url, { auto: false, path: 'manual' });
  backup.onChange('upload');
  backup.onChange('deploy/local');
  backup.onChange('backup');
  await until(() => logged.includes('central management: setting backed up'), 'on-demand backup');
  t.same((await s3.list('bk')).filter((k) => k.startsWith('manual/')).length, 2, 'one package and the feed: the changes queued nothing');
  t.equal(logged.filter((m) => m === 'central management: setting backed up').length, 1);
});

t.test('a store that fails is retried with growing waits until it takes the backup', async (t) => {
  let failures = 2;
  const store = await new TestOrigin().start();
  t.teardown(() => store.stop());
  store.otherwise((_req, res) => {
    if (failures > 0) { failures--; res.writeHead(503); res.end('<Error><Code>SlowDown</Code></Error>'); return; }
    res.writeHead(200); res.end();
  });
  const { backup, clock, logged } = backupTo(`http://127.0.0.1:${store.port}`);
  const done = backup.trigger();
  await until(() => store.seen.length === 1, 'first attempt');
  await clock.advance(999);
  t.equal(store.seen.length, 1, 'no attempt before the first back-off ends');
  await clock.advance(1);
  await until(() => store.seen.length === 2, 'second attempt after 1 s');
  await clock.advance(2000);
  await until(() => store.seen.length === 4, 'third attempt after 2 s more: package and feed');
  await done;
  t.same(store.seen.map((s) => s.url), ['/bk/edge/settings/2026/11/setting_20261124T200509Z.tgz', '/bk/edge/settings/2026/11/setting_20261124T200509Z.tgz',
    '/bk/edge/settings/2026/11/setting_20261124T200509Z.tgz', '/bk/edge/feed.json']);
  t.same(logged.filter((m) => m.includes('retried')).length, 2);
  t.ok(logged.includes('central management: setting backed up'));
});
