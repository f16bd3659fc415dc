import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadSettingFile } from '../../lib/setting-check/load.js';
import { resolveHosts, resolvePath } from '../../lib/setting/resolve.js';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/production.json');

t.test('a full production setting using every section loads without errors', async (t) => {
  const { setting, baseDir } = await loadSettingFile(fixture);
  t.equal(baseDir, path.dirname(fixture));
  t.equal(setting.meta.setting.deploy, 'shared');
  t.equal(setting.env.management.server.features.nodelist.feed?.type, 'cloudAsdk3');
  t.equal(setting.env.log.repository.list.length, 5);
  t.equal(setting.hosting.length, 5);
});

t.test('type-specific info of the production file gets its defaults', async (t) => {
  const { setting } = await loadSettingFile(fixture);
  const dynamo = setting.env.management.server.connection!.find((c) => c.name === 'dynamo')!;
  t.strictSame(dynamo.info, { region: 'ap-northeast-2', accessKeyId: '#IAMROLE', secretAccessKey: '#IAMROLE' });
  const gcs = setting.env.log.repository.list.find((r) => r.name === 'gcs')!;
  t.strictSame(gcs.compression, { enable: false });
  const agent = setting.env.log.repository.list.find((r) => r.name === 'agent')!;
  t.strictSame(agent.endpoint, { url: 'http://10.0.9.9:24224/push', exports: { enable: false, matchingList: null } });
});

t.test('the production hosts resolve: basehost by file and by name, facade, off listen', async (t) => {
  const { setting } = await loadSettingFile(fixture);
  const hosts = new Map(resolveHosts(setting).map((h) => [h.name, h]));
  const www = hosts.get('www.example.com')!;
  t.equal(www.functions.network.cache.ttl.default, 60, 'host override');
  t.equal(www.functions.network.http.backEnd.session.receiveTimeout, 15, 'global value');
  t.equal(www.functions.network.http.frontEnd.bypass.postMethod.enable, false);
  t.equal(www.https.length, 1);
  t.equal(www.urlRewrites.length, 2);

  const stat = hosts.get('static.example.com')!;
  t.strictSame(stat.aliases, ['img.example.com'], 'own aliases win over the host file');
  t.strictSame(stat.origin, { protocol: 'https', address: ['static-origin.example.com:443/assets'], address2: ['10.2.0.20:443'] });
  t.strictSame(stat.mode, { volatile: true, nonVolatileSize: 100 * 1024 * 1024, facadeHost: null, basehost: 'hosts/static-base.json' });
  t.equal(stat.functions.network.cache.ttl.default, 86400);
  t.equal(stat.functions.network.cache.compression.useOriginEncoding, false);
  t.equal(stat.functions.operations.log.access.xff, 'trimClientIp', 'global log setting under the file override');
  t.equal(stat.functions.operations.log.access.retention, 48);

  const m = hosts.get('m.example.com')!;
  t.strictSame(m.origin.address, ['10.1.0.30']);
  t.strictSame(m.origin.address2, ['origin-backup.example.com/www']);
  t.strictSame(m.aliases, ['*.m.example.com']);
  t.equal(m.functions.hook.enable, true, 'functions copied from the base host');

  const legacy = hosts.get('legacy.example.com')!;
  t.equal(legacy.enable, false);
  t.equal(legacy.listen, null);
  t.equal(legacy.mode.facadeHost, 'www.example.com');

  t.same(hosts.get('api.example.com')!.listen, { host: '10.0.1.11', port: 80 });
});

t.test('relative paths resolve against env.home', async (t) => {
  const { setting } = await loadSettingFile(fixture);
  t.equal(resolvePath(setting, setting.env.cache.indexPath), '/usr/local/svc/cache/index.sqlite');
  t.equal(resolvePath(setting, '/cache0'), '/cache0');
});
