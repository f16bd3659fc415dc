import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { loadSettingFile, parseSetting } from '../../lib/setting-check/load.js';
import { SettingError } from '../../lib/setting/issues.js';
import { issuesOf, minimal, minimalHost, paths } from './fixtures/helpers.js';

const withHost = (extra: Record<string, unknown>) => ({ hosting: [{ ...minimalHost, ...extra }] });

t.test('an unknown field inside a host is refused with its JSON path', async (t) => {
  t.strictSame(issuesOf(withHost({ origni: {} })), [{ path: 'hosting[0].origni', message: 'unknown field' }]);
});

t.test('unknown fields are refused at every depth', async (t) => {
  t.strictSame(paths({ colour: 1 }), ['colour']);
  t.strictSame(paths({ meta: { settingTrace: { keywrd: 'x' } } }), ['meta.settingTrace.keywrd']);
  t.strictSame(paths({ env: { management: { cluster: { meta: { enabled: true } } } } }), ['env.management.cluster.meta.enabled']);
  t.strictSame(paths({ env: { cache: { disks: [{ path: 'a' }, { path: 'b', qouta: '1gb' }] } } }), ['env.cache.disks[1].qouta']);
  t.strictSame(paths({ functions: { network: { cache: { ttl: { defualt: 5 } } } } }), ['functions.network.cache.ttl.defualt']);
  t.strictSame(paths(withHost({ origin: { address: ['10.0.0.1'], adress2: [] } })), ['hosting[0].origin.adress2']);
  t.strictSame(paths(withHost({ functions: { hook: { sesion: {} } } })), ['hosting[0].functions.hook.sesion']);
});

t.test('the network rule objects refuse members the schema does not know, globally and per host', async (t) => {
  const f = { network: { http: { frontEnd: { modify: { anything: [1] } } }, cache: { cachingKey: { custom: true } } } };
  t.strictSame(issuesOf({ functions: f, hosting: [{ ...minimalHost, functions: f }] }).map((i) => i.path), [
    'functions.network.http.frontEnd.modify.anything', 'functions.network.cache.cachingKey.custom',
    'hosting[0].functions.network.http.frontEnd.modify.anything', 'hosting[0].functions.network.cache.cachingKey.custom',
  ]);
});

t.test('a value of the wrong type names the expected and the given type', async (t) => {
  t.strictSame(issuesOf({ meta: { version: 1 } }), [{ path: 'meta.version', message: 'must be string, got integer' }]);
  t.strictSame(issuesOf({ env: { management: { api: { port: '10040' } } } }), [
    { path: 'env.management.api.port', message: 'must be integer, got string' },
  ]);
  t.strictSame(issuesOf(withHost({ enable: 'yes' })), [{ path: 'hosting[0].enable', message: 'must be boolean, got string' }]);
  t.strictSame(issuesOf({ hosting: {} }), [{ path: 'hosting', message: 'must be array, got object' }]);
  t.strictSame(issuesOf({ env: { management: { cluster: { discover: { members: 'all' } } } } }), [
    { path: 'env.management.cluster.discover.members', message: 'must be array or null, got "all"' },
  ]);
});

t.test('a value outside a fixed set lists the allowed values', async (t) => {
  t.strictSame(issuesOf({ env: { management: { cluster: { balance: { mode: 'random' } } } } }), [
    { path: 'env.management.cluster.balance.mode', message: 'must be one of "rr", "hash", got "random"' },
  ]);
});

t.test('a missing required member is named', async (t) => {
  t.strictSame(issuesOf({ hosting: [{ origin: { address: ['10.0.0.1'] } }] }), [
    { path: 'hosting[0].name', message: 'required field missing' },
  ]);
});

t.test('several errors of one file are reported together', async (t) => {
  const input = {
    meta: { version: 1, colour: 'red' },
    env: { cache: { memorySize: 'lots' }, log: { info: { retention: 0 } } },
    functions: { network: { http: { backEnd: { session: { connectTimeout: -1 } } } } },
    hosting: [
      { ...minimalHost, listen: '80' },
      { name: 'b.com', origin: { address: ['10.0.0.1:0'] }, origni: 1 },
    ],
  };
  const err = t.throws(() => parseSetting(input)) as SettingError;
  t.equal(err.code, 'SETTING_INVALID');
  t.strictSame(err.issues.map((i) => i.path).sort(), [
    'env.cache.memorySize',
    'env.log.info.retention',
    'functions.network.http.backEnd.session.connectTimeout',
    'hosting[0].listen',
    'hosting[1].origin.address[0]',
    'hosting[1].origni',
    'meta.colour',
    'meta.version',
  ]);
  t.equal(err.message.split('\n').length, 8);
  t.match(err.message, /^hosting\[0\]\.listen: /m);
});

t.test('listen must be {IP}:{Port} or off', async (t) => {
  for (const ok of ['*:80', '0.0.0.0:8080', '127.0.0.1:1', '[::1]:443', 'off', '*:65535']) {
    t.strictSame(issuesOf(withHost({ listen: ok })), [], ok);
  }
  for (const bad of ['80', '*:0', '*:65536', 'localhost:80', '1.2.3:80', '*:', ':80', 'OFF', '*:8o']) {
    const issues = issuesOf(withHost({ listen: bad }));
    t.equal(issues.length, 1, bad);
    t.equal(issues[0]!.path, 'hosting[0].listen');
    t.match(issues[0]!.message, /must be \{IP\}:\{Port\}.*or off, got/);
  }
});

t.test('origin addresses must be {IP|Domain}[:{Port}][/{Path}]', async (t) => {
  const good = ['10.0.0.1', '10.0.0.1:8080', 'origin.example.com', 'origin.example.com:443/base/path', '[::1]:8080',
    'localhost/x'];
  t.strictSame(issuesOf(withHost({ origin: { address: good, address2: ['backup.example.com'] } })), []);
  const bad = ['http://origin.example.com', 'origin.example.com:99999', 'a b.com', '10.0.0.1:', '-bad-.com', ''];
  const issues = issuesOf(withHost({ origin: { address: ['10.0.0.1'], address2: bad } }));
  t.strictSame(issues.map((i) => i.path), bad.map((_, i) => `hosting[0].origin.address2[${i}]`));
  t.match(issues[0]!.message, /\{IP\|Domain\}\[:\{Port\}\]\[\/\{Path\}\]/);
});

t.test('size strings must parse', async (t) => {
  t.strictSame(issuesOf({ env: { cache: { memorySize: '512kb', maxObjectSize: '1gb', memoryObjectMax: '0' } } }), []);
  t.strictSame(issuesOf(withHost({ mode: { nonVolatileSize: '100mb' } })), []);
  t.strictSame(paths(withHost({ mode: { nonVolatileSize: '100 megabytes' } })), ['hosting[0].mode.nonVolatileSize']);
  t.strictSame(paths({ env: { cache: { disks: [{ path: 'd', quota: '-1gb' }] } } }), ['env.cache.disks[0].quota']);
  t.strictSame(paths(withHost({ mode: { nonVolatileSize: 100 } })), ['hosting[0].mode.nonVolatileSize']);
});

t.test('other string forms are checked: cluster members, allowList addresses, cron, regexes', async (t) => {
  t.strictSame(paths({ env: { management: { cluster: { discover: { members: ['10.0.0.1', 'node-b'] } } } } }), [
    'env.management.cluster.discover.members[1]',
  ]);
  t.strictSame(paths({ env: { management: { api: { allowList: [{ addr: '10.0.0.0/33' }, { addr: '10.0.0.1-300' }, { addr: '10.0.0.0/255.0.255.0' }] } } } }), [
    'env.management.api.allowList[0].addr', 'env.management.api.allowList[1].addr', 'env.management.api.allowList[2].addr',
  ]);
  t.strictSame(paths({ env: { log: { metrics: { schedule: 'every 5 minutes' }, error: { filter: { patterns: { include: ['(unclosed'] } } } } } }), [
    'env.log.error.filter.patterns.include[0]', 'env.log.metrics.schedule',
  ]);
  t.strictSame(paths({ env: { management: { cluster: { stats: { listen: 'off' } } } } }), ['env.management.cluster.stats.listen']);
});

t.test('duplicate host names are refused at the later entry', async (t) => {
  t.strictSame(issuesOf({ hosting: [minimalHost, { ...minimalHost, listen: '*:81' }, { ...minimalHost, name: 'b.com' }] }), [
    { path: 'hosting[1].name', message: 'duplicate host name "a.com" (also hosting[0])' },
  ]);
});

t.test('rolling.time above 1440 minutes is refused', async (t) => {
  t.strictSame(paths({ functions: { operations: { log: { access: { rolling: { time: 1441 } } } } } }), [
    'functions.operations.log.access.rolling.time',
  ]);
  t.strictSame(issuesOf({ functions: { operations: { log: { access: { rolling: { time: 1440 } } } } } }), []);
});

t.test('the management https port equal to the API port is refused unless enableHttp is false', async (t) => {
  const api = (options: Record<string, unknown>) => ({ env: { management: { api: { port: 10040, https: { cert: 'c', key: 'k', options } } } } });
  t.strictSame(issuesOf(api({ listen: '0.0.0.0:10040' })), [{
    path: 'env.management.api.https.options.listen',
    message: 'port 10040 is env.management.api.port; set enableHttp to false or use another port',
  }]);
  t.strictSame(issuesOf(api({ listen: '0.0.0.0:10040', enableHttp: false })), []);
  t.strictSame(issuesOf(api({ listen: '0.0.0.0:10443' })), []);
});

t.test('maxVersion below minVersion is refused', async (t) => {
  const api = { env: { management: { api: { https: { cert: 'c', key: 'k', options: { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.2' } } } } } };
  t.strictSame(issuesOf(api), [{ path: 'env.management.api.https.options.maxVersion', message: 'TLSv1.2 is below minVersion TLSv1.3' }]);
});

t.test('roles named by defaultRole and allowList must exist; file roles add to the initial ones', async (t) => {
  t.strictSame(issuesOf({ env: { management: { api: { defaultRole: 'ops', allowList: [{ addr: '10.0.0.1', role: 'nobody' }] } } } }), [
    { path: 'env.management.api.defaultRole', message: 'no role named "ops"' },
    { path: 'env.management.api.allowList[0].role', message: 'no role named "nobody"' },
  ]);
  const s = parseSetting({ env: { management: { api: { defaultRole: 'ops', roles: [{ name: 'ops', permissions: { enablePurge: true } }] } } } });
  t.strictSame(s.env.management.api.roles.map((r) => r.name), ['ops', 'admin', 'user']);
  t.equal(s.env.management.api.roles[0]!.permissions.enableGet, true);
  t.equal(s.env.management.api.roles[0]!.permissions.enableSetting, false);
});

t.test('connections and repositories are checked by their type and referenced by name', async (t) => {
  const server = {
    connection: [
      { name: 'k', type: 'kafka', info: { clientId: 'c', brokers: ['b:9092'], extra: 1 } },
      { name: 'k', type: 'cloudAsdk3', info: { accessKeyId: 'a', secretAccessKey: 's', region: 'r' } },
    ],
    features: {
      purge: { enable: true, feed: { type: 'kafkaSub', info: { connect: 'missing', groupId: 'g', subscribe: { topic: 't' } } } },
      heartbeat: { enable: true },
    },
  };
  const log = { repository: { list: [{ name: 'r', type: 'statsd', rolling: '0 *', path: '/', endpoint: { port: 'x' } }] }, info: { backup: ['nope'], rolling: { time: 10 } } };
  t.strictSame(issuesOf({ env: { management: { server }, log } }), [
    { path: 'env.management.server.connection[0].info.extra', message: 'unknown field' },
    { path: 'env.management.server.connection[1].name', message: 'duplicate connection name "k"' },
    { path: 'env.management.server.features.purge.feed.info.connect', message: 'no connection named "missing"' },
    { path: 'env.management.server.features.heartbeat.feedback', message: 'required when enable is true' },
    { path: 'env.log.repository.list[0].endpoint.port', message: 'must be integer, got string' },
    { path: 'env.log.info.backup[0]', message: 'no repository named "nope" in env.log.repository.list' },
  ]);
});

t.test('a hook that is enabled needs a path and a param that is serialised JSON', async (t) => {
  t.strictSame(issuesOf(withHost({ functions: { hook: { enable: true, session: { param: '{bad' } } } })), [
    { path: 'hosting[0].functions.hook.path', message: 'required when the hook is enabled' },
    { path: 'hosting[0].functions.hook.session.param', message: 'must be a serialised JSON object' },
  ]);
  t.strictSame(issuesOf({ functions: { hook: { path: 'http://127.0.0.1:1/h' } }, hosting: [{ ...minimalHost, functions: { hook: { enable: true } } }] }), []);
});

t.test('a partSize above limitMaxRange is refused at its path; limitMaxRange 0 turns pieces off and accepts any partSize', async (t) => {
  t.strictSame(issuesOf(withHost({ functions: { network: { cache: { limitMaxRange: 1048576, partSize: 2097152 } } } })), [
    { path: 'hosting[0].functions.network.cache.partSize', message: '2097152 is above limitMaxRange 1048576; a piece must not be longer than the objects stored in pieces' },
  ]);
  t.strictSame(paths({ functions: { network: { cache: { limitMaxRange: 16777216, partSize: 33554432 } } }, hosting: [minimalHost] }), ['functions.network.cache.partSize']);
  t.strictSame(issuesOf(withHost({ functions: { network: { cache: { limitMaxRange: 0, partSize: 2097152 } } } })), []);
  t.strictSame(paths(withHost({ functions: { network: { cache: { partSize: 1024 } } } })), ['hosting[0].functions.network.cache.partSize'], 'below 64 KiB');
});

t.test('fallback service codes are #LAST, #FIRST, #BEFORE or a code other than 1xx, 206 and 3xx', async (t) => {
  const fb = (serviceCode: unknown) => withHost({ fallbacks: { enable: true, matchingList: [{ resCodes: ['fail'], serviceCode }] } });
  t.strictSame(issuesOf(fb('#FIRST')), []);
  t.strictSame(issuesOf(fb(503)), []);
  t.strictSame(paths(fb('#NEXT')), ['hosting[0].fallbacks.matchingList[0].serviceCode']);
  t.strictSame(paths(fb(206)), ['hosting[0].fallbacks.matchingList[0].serviceCode']);
  t.strictSame(paths(fb(302)), ['hosting[0].fallbacks.matchingList[0].serviceCode']);
  t.strictSame(paths(withHost({ fallbacks: { matchingList: [{ resCodes: ['6xx', 700] }] } })), [
    'hosting[0].fallbacks.matchingList[0].resCodes[0]', 'hosting[0].fallbacks.matchingList[0].resCodes[1]',
  ]);
});

t.test('a facade host must name another host', async (t) => {
  t.strictSame(paths(withHost({ mode: { facadeHost: 'nowhere.com' } })), ['hosting[0].mode.facadeHost']);
  t.strictSame(issuesOf({ hosting: [minimalHost, { name: 'f.com', mode: { facadeHost: 'a.com' } }] }), []);
});

t.test('a host may not listen on the management or RT control port', async (t) => {
  t.strictSame(paths(withHost({ listen: '*:10040' })), ['hosting[0].listen']);
  t.strictSame(paths(withHost({ listen: '*:10039' })), ['hosting[0].listen']);
});

t.test('a setting that is not a JSON object is refused', async (t) => {
  t.strictSame(issuesOf([]), [{ path: '', message: 'setting must be a JSON object' }]);
});

t.test('a JSON syntax error is reported with its line and column', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'setting-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'setting.json');
  await fs.writeFile(file, '{\n  "meta": {\n    "group": "x",\n  }\n}\n');
  const err = await loadSettingFile(file).then(() => undefined, (e: unknown) => e) as SettingError;
  t.ok(err instanceof SettingError);
  t.equal(err.issues.length, 1);
  t.equal(err.issues[0]!.path, '');
  t.match(err.message, /line 4, column 3/);
  await fs.writeFile(file, JSON.stringify(minimal()));
  const loaded = await loadSettingFile(file);
  t.equal(loaded.baseDir, dir);
  t.equal(loaded.raw, JSON.stringify(minimal()));
});

t.test('a balance.luaPath script that does not load is refused with the path of the field', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-lua-'));
  await fs.writeFile(path.join(dir, 'broken.lua'), 'function hash(key) return key +');
  await fs.writeFile(path.join(dir, 'nohash.lua'), 'local x = 1');
  await fs.writeFile(path.join(dir, 'ok.lua'), 'function hash(key) return #key end');
  const withLua = (file: string) => ({ ...minimal(), env: { home: dir, management: { cluster: { balance: { mode: 'hash', luaPath: file } } } } });
  for (const file of ['broken.lua', 'nohash.lua', 'missing.lua']) {
    const err = (() => { try { parseSetting(withLua(file), { baseDir: dir }); return undefined; } catch (e) { return e as SettingError; } })();
    t.ok(err instanceof SettingError, `${file} is refused`);
    t.equal(err?.issues[0]?.path, 'env.management.cluster.balance.luaPath');
  }
  t.equal(parseSetting(withLua('ok.lua'), { baseDir: dir }).env.management.cluster.balance.luaPath, 'ok.lua', 'a working script is accepted');
});

t.test('a cache tag field that is no HTTP field name, or too many of them, is refused with its path', async (t) => {
  t.strictSame(paths(withHost({ functions: { network: { cache: { tags: { fields: ['Surrogate Key'] } } } } })), ['hosting[0].functions.network.cache.tags.fields[0]']);
  t.strictSame(paths({ functions: { network: { cache: { tags: { fields: Array.from({ length: 9 }, (_, i) => `X-Tag-${i}`) } } } } }), ['functions.network.cache.tags.fields']);
  t.strictSame(paths({ functions: { network: { cache: { tags: { strip: 'no' } } } } }), ['functions.network.cache.tags.strip']);
});

t.test('a Cache-Status name that is empty, too long or not printable ASCII is refused at its path', async (t) => {
  const named = (name: unknown) => withHost({ functions: { network: { cache: { cacheStatus: { name } } } } });
  t.strictSame(issuesOf(named('Edge "A" (eu-1)')), []);
  t.strictSame(paths(named('')), ['hosting[0].functions.network.cache.cacheStatus.name']);
  t.strictSame(paths(named('café')), ['hosting[0].functions.network.cache.cacheStatus.name']);
  t.strictSame(paths(named('a\tb')), ['hosting[0].functions.network.cache.cacheStatus.name']);
  t.strictSame(paths(named('x'.repeat(129))), ['hosting[0].functions.network.cache.cacheStatus.name']);
  t.strictSame(paths(withHost({ functions: { network: { cache: { cacheStatus: { enable: 'yes' } } } } })), ['hosting[0].functions.network.cache.cacheStatus.enable']);
  t.strictSame(paths(withHost({ functions: { network: { cache: { cacheStatus: { keys: true } } } } })), ['hosting[0].functions.network.cache.cacheStatus.keys'], 'an unknown member');
});
