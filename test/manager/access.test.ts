import t from 'tap';
import { AccessControl, permissionFor } from '../../lib/manager/index.js';
import { compileAddress, parseIp } from '../../lib/access/ip.js';
import { call, makeSetting, startApi } from './fixtures/helpers.js';

const roles = makeSetting().env.management.api.roles;
const acl = (allowList: Array<{ addr: string; role?: string }>, defaultRole = 'admin'): AccessControl =>
  new AccessControl({ allowList, roles, defaultRole });

t.test('a single address matches only itself', async (t) => {
  const a = acl([{ addr: '10.1.2.3', role: 'user' }]);
  t.equal(a.roleOf('10.1.2.3'), 'user');
  t.equal(a.roleOf('10.1.2.4'), undefined);
});

t.test('a last-octet range matches from its low to its high end', async (t) => {
  const a = acl([{ addr: '192.168.5.10-20', role: 'user' }]);
  t.equal(a.roleOf('192.168.5.9'), undefined);
  t.equal(a.roleOf('192.168.5.10'), 'user');
  t.equal(a.roleOf('192.168.5.20'), 'user');
  t.equal(a.roleOf('192.168.5.21'), undefined);
  t.equal(a.roleOf('192.168.6.15'), undefined);
});

t.test('a bitmask matches its network', async (t) => {
  const a = acl([{ addr: '172.16.0.0/12', role: 'user' }]);
  t.equal(a.roleOf('172.31.255.255'), 'user');
  t.equal(a.roleOf('172.32.0.0'), undefined);
  t.equal(acl([{ addr: '0.0.0.0/0' }]).roleOf('8.8.8.8'), 'admin');
});

t.test('a dotted subnet mask matches like the equal bitmask', async (t) => {
  const a = acl([{ addr: '10.9.8.0/255.255.255.0', role: 'user' }]);
  t.equal(a.roleOf('10.9.8.200'), 'user');
  t.equal(a.roleOf('10.9.9.1'), undefined);
  t.throws(() => compileAddress('10.9.8.0/255.0.255.0'), /bad allowList address/);
});

t.test('IPv4-mapped IPv6 callers compare as IPv4, in every spelling', async (t) => {
  const a = acl([{ addr: '127.0.0.1', role: 'user' }]);
  t.equal(a.roleOf('::ffff:127.0.0.1'), 'user');
  t.equal(a.roleOf('0000:0000:0000:0000:0000:ffff:7f00:0001'), 'user');
  t.equal(a.roleOf('::ffff:7f00:2'), undefined);
  t.same(parseIp('::1'), { v: 6, n: 1n });
});

t.test('IPv6 addresses and prefixes are accepted', async (t) => {
  const a = acl([{ addr: '2001:db8::/32', role: 'user' }, { addr: '::1' }]);
  t.equal(a.roleOf('2001:db8:1::5'), 'user');
  t.equal(a.roleOf('2001:db9::1'), undefined);
  t.equal(a.roleOf('::1'), 'admin');
});

t.test('the first matching entry decides, and an entry without role gets defaultRole', async (t) => {
  const a = acl([{ addr: '10.0.0.5', role: 'user' }, { addr: '10.0.0.0/24' }], 'admin');
  t.equal(a.roleOf('10.0.0.5'), 'user');
  t.equal(a.roleOf('10.0.0.6'), 'admin');
  t.equal(acl([{ addr: '10.0.0.0/24' }], 'user').roleOf('10.0.0.6'), 'user');
});

t.test('an address that is not an allowList form is refused when compiling', async (t) => {
  t.throws(() => compileAddress('10.0.0.300'), /bad allowList address/);
  t.throws(() => compileAddress('10.0.0.20-10'), /bad address range/);
  t.throws(() => compileAddress('example.com'), /bad allowList address/);
});

t.test('each path prefix is gated by its permission', async (t) => {
  t.equal(permissionFor('/setting/deploy/local'), 'enableSetting');
  t.equal(permissionFor('/command/purge'), 'enablePurge');
  t.equal(permissionFor('/command/expireafter'), 'enablePurge');
  t.equal(permissionFor('/command/async/asynctrl/reset'), 'enablePurge');
  t.equal(permissionFor('/command/resetorigin'), 'enablePurge');
  t.equal(permissionFor('/command/install/1.2.3'), 'enableInstall');
  t.equal(permissionFor('/command/service/restart'), 'enableRestart');
  t.equal(permissionFor('/command/stop'), 'enableRestart');
  t.equal(permissionFor('/metrics'), 'enableMetric');
  t.equal(permissionFor('/graph/cpu_day.png'), 'enableGraph');
  t.equal(permissionFor('/monitoring/hwinfo'), 'enableMonitoring');
  t.equal(permissionFor('/get/setting.env'), 'enableGet');
  t.equal(permissionFor('/cluster'), 'enableCluster');
  t.equal(permissionFor('/settingx'), undefined);
});

t.test('callers from different source addresses get what their role allows', async (t) => {
  const { api, port } = await startApi(makeSetting({
    allowList: [
      { addr: '127.0.0.1', role: 'admin' },
      { addr: '127.0.0.2', role: 'user' },
      { addr: '127.0.0.10-20', role: 'user' },
      { addr: '127.0.1.0/24' },
      { addr: '127.0.2.0/255.255.255.0', role: 'user' },
    ],
  }));
  t.teardown(() => api.close());

  const admin = await call(port, '/monitoring/vhostslist', { from: '127.0.0.1' });
  t.equal(admin.status, 200, 'admin reads monitoring');
  const adminReset = await call(port, '/command/resetorigin', { from: '127.0.0.1' });
  t.equal(adminReset.status, 200, 'admin may reset origins (enablePurge)');
  const adminSetting = await call(port, '/setting/history', { from: '127.0.0.1' });
  t.equal(adminSetting.status, 404, 'admin passes the /setting gate (no such route yet)');
  const adminInstall = await call(port, '/command/install', { from: '127.0.0.1' });
  t.equal(adminInstall.status, 401, 'admin has no enableInstall by default');

  for (const from of ['127.0.0.2', '127.0.0.15', '127.0.2.9']) {
    t.equal((await call(port, '/monitoring/vhostslist', { from })).status, 200, `user at ${from} reads monitoring`);
    const setting = await call(port, '/setting/history', { from });
    t.equal(setting.status, 401, `user at ${from} gets 401 on /setting`);
    t.equal(setting.json.reason, 'Unauthorized');
    t.equal((await call(port, '/command/purge?url=x', { from })).status, 401, `user at ${from} gets 401 on /command/purge`);
    t.equal((await call(port, '/command/resetorigin', { from })).status, 401, `user at ${from} gets 401 on resetorigin`);
  }

  t.equal((await call(port, '/setting/history', { from: '127.0.1.77' })).status, 404, 'an entry without role gets defaultRole admin');
  t.equal((await call(port, '/command/resetorigin', { from: '127.0.1.77' })).status, 200);
});

t.test('an address on no entry gets 401 with a fail envelope on every path', async (t) => {
  const { api, port } = await startApi(makeSetting({ allowList: [{ addr: '127.0.0.1' }] }));
  t.teardown(() => api.close());
  for (const path of ['/monitoring/vhostslist', '/get/setting', '/nowhere']) {
    const r = await call(port, path, { from: '127.0.0.3' });
    t.equal(r.status, 401, path);
    t.equal(r.json.status, 'fail');
    t.equal(r.json.reason, 'Unauthorized');
    t.equal(r.json.version, '0.1.0-test');
    t.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  }
});

t.test('without an allowList nobody is let in', async (t) => {
  const { api, port } = await startApi(makeSetting());
  t.teardown(() => api.close());
  t.equal((await call(port, '/monitoring/vhostslist')).status, 401);
});

t.test('a percent-encoded path is checked after decoding, so it cannot slip past its gate', async (t) => {
  const { api, port } = await startApi(makeSetting({ allowList: [{ addr: '127.0.0.2', role: 'user' }] }));
  t.teardown(() => api.close());
  const r = await call(port, '/%63ommand/resetorigin', { from: '127.0.0.2' });
  t.equal(r.status, 401);
  t.equal((await call(port, '/monitoring/%2e%2e/command/resetorigin', { from: '127.0.0.2' })).status, 400);
});

t.test('applySetting changes the allowList and roles at once, without a restart', async (t) => {
  const { api, port, setting } = await startApi(makeSetting({ allowList: [{ addr: '127.0.0.1', role: 'user' }] }));
  t.teardown(() => api.close());
  t.equal((await call(port, '/command/resetorigin')).status, 401);
  const next = makeSetting({
    allowList: [{ addr: '127.0.0.1', role: 'ops' }],
    roles: [{ name: 'ops', permissions: { enablePurge: true } }],
  });
  next.env.management.api.port = setting.env.management.api.port;
  api.applySetting(next);
  t.equal((await call(port, '/command/resetorigin')).status, 200, 'the new role has enablePurge');
  t.equal((await call(port, '/monitoring/vhostslist')).status, 401, 'and not enableMonitoring (default false)');
});

t.test('a route outside every permission gate is refused when the route table is built', async (t) => {
  const { assertGated } = await import('../../lib/manager/router.js');
  const { allRoutes } = await import('../../lib/manager/routes/index.js');
  t.doesNotThrow(() => assertGated(allRoutes()));
  const handler = async () => ({ status: 200, body: '' });
  t.throws(() => assertGated([{ method: 'GET', path: '/status', name: 'status', group: 'query', handler }]), /GET \/status is under no permission gate/);
  t.throws(() => assertGated([{ method: 'GET', path: '/', prefix: true, name: 'x', group: 'query', handler }]), /under no permission gate/);
});
