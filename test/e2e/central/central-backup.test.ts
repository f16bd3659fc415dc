// Black-box: events.onSettingLoad.backup of a real node to a real S3-compatible store (s3rver),
// and a new node bootstrapping from that backup: its apiPolling feed reads feed.json from the
// store and applies the backed-up package.
import t from 'tap';
import { TestOrigin } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { startS3 } from '../../helpers/s3.js';
import { call, fetchHost, until } from '../../lifecycle/fixtures/node.js';
import { startCentralNode, s3Connection } from './central-server.js';

const s3 = await startS3(['bk']);
const origin = await new TestOrigin().start();
const port = await freePort();
const host = (name: string) => ({ name, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } });
const a = await startCentralNode([host('a.com')], {
  connection: [s3Connection(s3.url, 'bk')],
  events: { onSettingLoad: { backup: { enable: true, connect: 's3', path: 'edge', timeout: 5 } } },
});
t.teardown(async () => { await a.stop(); await origin.stop(); await s3.stop(); });

t.test('a setting change is backed up to <path>/settings/<yyyy>/<mm>/ with <path>/feed.json, and a new node bootstraps from it', async (t) => {
  const next = (await call(a.apiPort, '/setting/setting.json')).json as Record<string, any>;
  next.hosting.push(host('b.com'));
  const r = await call(a.apiPort, '/setting/upload', { body: JSON.stringify(next) });
  t.equal(r.status, 200, r.text);
  const keys = await until(async () => {
    const k = await s3.list('bk');
    return k.includes('edge/feed.json') ? k : undefined;
  }, 'the backup in the store', 20_000);
  const now = new Date();
  const month = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  const pkgKey = keys.find((k) => k !== 'edge/feed.json')!;
  t.match(pkgKey, new RegExp(`^edge/settings/${month}/setting_\\d{8}T\\d{6}Z\\.tgz$`));
  const feed = JSON.parse((await s3.get('bk', 'edge/feed.json')).toString()) as Record<string, any>;
  t.match(feed, { messageVer: '1', action: { api: '/setting/upload' }, parameters: [{ url: `${s3.url}/bk/${pkgKey}` }] });
  await a.stop();

  const b = await startCentralNode([], {
    connection: [s3Connection(s3.url, 'bk')],
    features: { setting: { enable: true, feed: { type: 'apiPolling', info: { url: `${s3.url}/bk/edge/feed.json`, schedule: '* * * * * *', timeout: 5 } } } },
    // This node backs up only when asked (auto false).
    events: { onSettingLoad: { backup: { enable: true, auto: false, connect: 's3', path: 'node-b', timeout: 5 } } },
  });

  t.teardown(() => b.stop());
  const names = await until(async () => {
    const s = (await call(b.apiPort, '/setting/setting.json')).json as { hosting?: { name: string }[] };
    const list = (s.hosting ?? []).map((h) => h.name);
    return list.length === 2 ? list : undefined;
  }, 'the new node applied the backed-up setting', 20_000);
  t.same(names, ['a.com', 'b.com']);
  t.equal((await fetchHost(port, 'b.com', '/x')).status, 200, 'the bootstrapped node serves the backed-up hosts');

  // With auto false the setting change above backed nothing up; GET /setting/deploy/backup does.
  t.notOk((await s3.list('bk')).some((k) => k.startsWith('node-b/')), 'no automatic backup');
  const asked = await call(b.apiPort, '/setting/deploy/backup');
  t.equal(asked.json.status, 'OK', asked.text);
  const own = await until(async () => {
    const k = (await s3.list('bk')).filter((x) => x.startsWith('node-b/'));
    return k.length === 2 ? k : undefined;
  }, 'the on-demand backup in the store', 20_000);
  t.match(own, [/^node-b\/feed\.json$/, /^node-b\/settings\/\d{4}\/\d{2}\/setting_\d{8}T\d{6}Z\.tgz$/]);
});
