import t from 'tap';
import { getRoutes } from '../../lib/manager/routes/get.js';
import { request, startWith, VERSION } from '../license/helpers.js';
import { certHome, hosting, querySetting, source, type MutableSource } from './fixtures.js';

const { home, cleanup } = certHome();
t.teardown(cleanup);

async function node(t: { teardown(fn: () => unknown): void }, hosts = hosting()): Promise<{ port: number; src: MutableSource }> {
  const setting = querySetting(home, hosts);
  const src = source(setting);
  const { api, port } = await startWith(setting, getRoutes(src));
  t.teardown(() => api.close());
  return { port, src };
}

const get = async (port: number, path: string) => request(port, path);

t.test('/get/setting and /get/setting/running answer the whole running setting', async (t) => {
  const { port, src } = await node(t);
  const whole = await get(port, '/get/setting');
  t.equal(whole.status, 200);
  t.equal(whole.headers['content-type'], 'application/json; charset=utf-8');
  t.match(whole.json, { version: VERSION, method: 'setting', status: 'OK', reason: null });
  t.strictSame(whole.json.result, JSON.parse(JSON.stringify(src.setting)));
  t.strictSame(Object.keys(whole.json.result as object).sort(), ['env', 'functions', 'hosting', 'meta']);
  t.strictSame((await get(port, '/get/setting/running')).json.result, whole.json.result);
  t.strictSame((await get(port, '/get/setting/')).json.result, whole.json.result, 'a trailing slash is the same path');
});

t.test('a dot path selects a part of the setting', async (t) => {
  const { port, src } = await node(t);
  t.strictSame((await get(port, '/get/setting.env')).json.result, JSON.parse(JSON.stringify(src.setting.env)));
  t.strictSame((await get(port, '/get/setting.functions.network.http')).json.result, JSON.parse(JSON.stringify(src.setting.functions.network.http)));
  t.equal((await get(port, '/get/setting.meta.version')).json.result, '7');
  t.equal((await get(port, '/get/setting.functions.network.http.frontEnd.maxUrlLength')).json.result, 8192, 'a scalar is a result too');
  t.equal((await get(port, '/get/setting/running.env.home')).json.result, home);
});

t.test('hosting entries are selected by name, by name=, and by index, and paths go on after them', async (t) => {
  const { port } = await node(t);
  for (const p of ['/get/setting.hosting[b.com]', '/get/setting.hosting[name=b.com]', '/get/setting.hosting[1]', '/get/setting[b.com]',
    '/get/setting[name=b.com]', '/get/setting[1]', '/get/setting.hosting%5Bname=b.com%5D']) {
    const r = await get(port, p);
    t.equal(r.status, 200, p);
    t.match(r.json.result, { name: 'b.com', origin: { address: ['origin.b.com'] } }, p);
  }
  t.strictSame((await get(port, '/get/setting.hosting[name=a.com].origin')).json.result,
    { address: ['10.0.0.1:80', '10.0.0.3'], address2: ['10.0.0.2'], protocol: 'http' });
  t.equal((await get(port, '/get/setting.hosting[0].origin.address[1]')).json.result, '10.0.0.3', 'index selectors work on any array');
  t.equal((await get(port, '/get/setting[a.com].https[0].cert')).json.result, 'a.crt');
});

t.test('a path that names no setting is 404 with the part that was not found', async (t) => {
  const { port } = await node(t);
  const cases: Array<[string, string]> = [
    ['/get/setting.nope', 'setting.nope'],
    ['/get/setting.env.nope.deeper', 'setting.env.nope'],
    ['/get/setting.hosting[zzz.com]', 'setting.hosting[name=zzz.com]'],
    ['/get/setting.hosting[name=zzz.com].origin', 'setting.hosting[name=zzz.com]'],
    ['/get/setting.hosting[3]', 'setting.hosting[3]'],
    ['/get/setting[9]', 'setting.hosting[9]'],
    ['/get/setting.env[0]', 'setting.env[0]'],
    ['/get/setting.meta.version.length', 'setting.meta.version.length'],
  ];
  for (const [p, missing] of cases) {
    const r = await get(port, p);
    t.equal(r.status, 404, p);
    t.strictSame(r.json, { version: VERSION, method: 'setting', status: 'fail', result: null, reason: `no corresponding setting: ${missing}` }, p);
  }
});

t.test('a malformed selector or path is a bad call (400)', async (t) => {
  const { port } = await node(t);
  for (const p of ['/get/setting.hosting[', '/get/setting.hosting[]', '/get/setting..env', '/get/setting.', '/get/setting.hosting[x=y]',
    '/get/setting.hosting[name=]', '/get/setting.hosting[a[b]]', '/get/setting/other', '/get/setting.env/artifact', '/get/setting[0]x',
    '/get/hosting[0].origin', '/get/hosting[']) {
    const r = await get(port, p);
    t.equal(r.status, 400, p);
    t.equal(r.json.status, 'fail', p);
    t.match(r.json.reason, /^bad query: /, p);
  }
  t.equal((await get(port, '/get/settings')).status, 404, 'a path that only begins like /get/setting is an unknown path');
  t.equal((await get(port, '/get/hostingx')).status, 404);
});

t.test('the artifact is 404 until a setting waits for a restart, then selectable like the running one', async (t) => {
  const { port, src } = await node(t);
  for (const p of ['/get/setting/artifact', '/get/setting[a.com]/artifact']) {
    const r = await get(port, p);
    t.equal(r.status, 404, p);
    t.equal(r.json.reason, 'no artifact: no setting is waiting for a restart', p);
  }
  src.pending = querySetting('/srv/next', [{ name: 'n.com', origin: { address: ['10.9.9.9'] } }, ...hosting()]);
  t.match((await get(port, '/get/setting/artifact')).json.result, { env: { home: '/srv/next' } });
  for (const p of ['/get/setting[n.com]/artifact', '/get/setting[name=n.com]/artifact', '/get/setting[0]/artifact']) {
    const r = await get(port, p);
    t.equal(r.status, 200, p);
    t.match(r.json.result, { name: 'n.com' }, p);
  }
  t.equal((await get(port, '/get/setting/artifact.env.home')).json.result, '/srv/next');
  t.strictSame((await get(port, '/get/setting[a.com]/artifact.origin.address')).json.result, ['10.0.0.1:80', '10.0.0.3']);
  t.equal((await get(port, '/get/setting[zzz]/artifact')).status, 404);
  t.match((await get(port, '/get/setting[0]')).json.result, { name: 'a.com' }, 'the running setting is unchanged');
});

t.test('a setting that cannot be loaded is 500', async (t) => {
  const { port, src } = await node(t);
  src.broken = new Error('setting.json vanished');
  for (const p of ['/get/setting', '/get/setting.env', '/get/hosting', '/get/https']) {
    const r = await get(port, p);
    t.equal(r.status, 500, p);
    t.equal(r.json.reason, 'the setting could not be loaded: setting.json vanished', p);
  }
});

t.test('/get/hosting lists every host with its origin addresses and enabled functions', async (t) => {
  const { port } = await node(t);
  const all = await get(port, '/get/hosting');
  t.equal(all.status, 200);
  t.match(all.json, { version: VERSION, method: 'hosting', status: 'OK', reason: null });
  t.strictSame(all.json.result, [
    { name: 'a.com', origin: ['10.0.0.1:80', '10.0.0.3'], functions: ['hook'] },
    { name: 'b.com', origin: ['origin.b.com'], functions: ['pagedesk'] },
    { name: 'c.com', origin: ['10.0.0.9:8080'], functions: [] },
  ]);
  for (const p of ['/get/hosting[b.com]', '/get/hosting[name=b.com]', '/get/hosting[1]']) {
    t.strictSame((await get(port, p)).json.result, [{ name: 'b.com', origin: ['origin.b.com'], functions: ['pagedesk'] }], p);
  }
  const none = await get(port, '/get/hosting[name=zzz.com]');
  t.equal(none.status, 404);
  t.equal(none.json.reason, 'no hosting [name=zzz.com]');
  t.equal((await get(port, '/get/hosting[7]')).status, 404);
});

t.test('/get/hosting with no hosting at all is 404', async (t) => {
  const { port } = await node(t, []);
  const r = await get(port, '/get/hosting');
  t.equal(r.status, 404);
  t.strictSame(r.json, { version: VERSION, method: 'hosting', status: 'fail', result: null, reason: 'no hosting' });
});

t.test('/get/https is 200 when every HTTPS service has a readable, matching, unexpired certificate', async (t) => {
  const { port } = await node(t);
  const r = await get(port, '/get/https');
  t.equal(r.status, 200);
  t.strictSame(r.json, {
    version: VERSION, method: 'https', status: 'OK', reason: null,
    result: [{ name: 'a.com', enable: true, https: [{ cert: 'a.crt', key: 'a.key', ca: 'a.crt' }] }],
  });
});

t.test('/get/https is 503 when some HTTPS service does not work, each with its error', async (t) => {
  const hosts = hosting();
  hosts.push(
    { name: 'missing.com', https: [{ cert: 'nope.crt', key: 'a.key' }] },
    { name: 'mismatch.com', https: [{ cert: 'a.crt', key: 'other.key' }] },
    { name: 'junk.com', https: [{ cert: 'junk.crt', key: 'a.key' }] },
    { name: 'off.com', enable: false, https: [{ cert: 'nope.crt', key: 'nope.key' }] },
  );
  const { port } = await node(t, hosts);
  const r = await get(port, '/get/https');
  t.equal(r.status, 503);
  t.equal(r.json.status, 'fail');
  t.equal(r.json.reason, 'HTTPS service not working: missing.com, mismatch.com, junk.com');
  const byName = new Map((r.json.result as Array<{ name: string; enable: boolean; error?: string }>).map((e) => [e.name, e]));
  t.strictSame(byName.get('a.com'), { name: 'a.com', enable: true, https: [{ cert: 'a.crt', key: 'a.key', ca: 'a.crt' }] });
  t.match(byName.get('missing.com'), { enable: false, error: /^certificate .*nope\.crt cannot be read: ENOENT$/ });
  t.match(byName.get('mismatch.com'), { enable: false, error: 'key other.key does not belong to certificate a.crt' });
  t.match(byName.get('junk.com'), { enable: false, error: /^certificate junk\.crt is not a certificate/ });
  t.match(byName.get('off.com'), { enable: false, error: 'virtual host is disabled' }, 'a disabled host is listed but decides nothing');
});

t.test('/get/https with no HTTPS service is 404', async (t) => {
  const { port } = await node(t, hosting().map((h) => ({ ...h, https: undefined })));
  const r = await get(port, '/get/https');
  t.equal(r.status, 404);
  t.equal(r.json.reason, 'no HTTPS service');
  t.strictSame(r.json.result, []);
});

t.test('/get/discover answers an empty list until discovery exists', async (t) => {
  const { port } = await node(t);
  const r = await get(port, '/get/discover');
  t.equal(r.status, 200);
  t.strictSame(r.json, { version: VERSION, method: 'discover', status: 'OK', result: [], reason: null });
});

t.test('/get needs enableGet', async (t) => {
  const setting = querySetting(home, hosting(), {
    allowList: [{ addr: '127.0.0.1' }, { addr: '127.0.0.2', role: 'blind' }],
    roles: [{
      name: 'blind',
      permissions: {
        enableSetting: false, enablePurge: false, enableMetric: false, enableGraph: false, enableMonitoring: true,
        enableInstall: false, enableRestart: false, enableGet: false, enableCluster: false,
      },
    }],
  });
  const { api, port } = await startWith(setting, getRoutes(source(setting)));
  t.teardown(() => api.close());
  for (const p of ['/get/setting', '/get/setting.env', '/get/hosting[0]', '/get/https', '/get/discover']) {
    t.equal((await request(port, p, { from: '127.0.0.2' })).status, 401, p);
    t.equal((await request(port, p)).status === 401, false, `${p} for admin`);
  }
});
