import t from 'tap';
import { parseSetting } from '../../lib/setting-check/load.js';
import { resolveHosts, resolvePath } from '../../lib/setting/resolve.js';
import { minimal } from './fixtures/helpers.js';

const s = parseSetting(minimal(), { baseDir: '/srv/edge' });

t.test('meta gets every default of the spec', async (t) => {
  t.strictSame(s.meta, {
    version: '1', group: '', labelGroupToMetrics: true, branch: '',
    setting: { deploy: 'exclusive' },
    history: { retention: { days: 60, count: 100, size: 10 } },
    settingTrace: { enable: false, keyword: '_trace_' },
  });
});

t.test('env.home defaults to /usr/local/svc and the cache to our sizes', async (t) => {
  t.equal(s.env.home, '/usr/local/svc');
  t.strictSame(s.env.cache, {
    memorySize: '256mb', memoryObjectMax: '8mb', maxObjectSize: '2gb',
    disks: [{ path: 'cache/disk0', quota: '10gb' }], indexPath: 'cache/index.sqlite',
  });
});

t.test('the management API defaults to port 10040 with the initial admin and user roles', async (t) => {
  const api = s.env.management.api;
  t.equal(api.port, 10040);
  t.equal(api.defaultRole, 'admin');
  t.equal(api.multipartName, 'settingFile');
  t.equal(api.allowList, undefined);
  t.equal(api.https, undefined);
  t.strictSame(api.roles, [
    {
      name: 'admin',
      permissions: {
        enableSetting: true, enablePurge: true, enableMetric: true, enableGraph: true, enableMonitoring: true,
        enableInstall: false, enableRestart: false, enableGet: true, enableCluster: true,
      },
    },
    {
      name: 'user',
      permissions: {
        enableSetting: false, enablePurge: false, enableMetric: true, enableGraph: true, enableMonitoring: true,
        enableInstall: false, enableRestart: false, enableGet: true, enableCluster: false,
      },
    },
  ]);
});

t.test('the cluster defaults: one worker per core when enabled, rr balance, stats on 127.0.0.1:10038, discovery and the invalidation bus off', async (t) => {
  t.strictSame(s.env.management.cluster, {
    meta: { enable: false, baseHostingPort: 9000, workers: 0, drainTimeout: 30 },
    discover: { port: 9900, members: null, enable: false, secret: '', listen: '0.0.0.0', period: 5 },
    balance: { mode: 'rr', luaPath: null, urlIgnoreList: ['#FUNCTION'] },
    stats: { enable: true, listen: '127.0.0.1:10038' },
    bus: { enable: false, url: 'redis://127.0.0.1:6379', stream: 'svc:invalidations', node: '', startTimeout: 10, maxLen: 100000 },
  });
});

t.test('central-management sync is off by default, every feature and event disabled', async (t) => {
  const server = s.env.management.server;
  t.equal(server.enable, false);
  t.equal(server.connection, undefined);
  t.strictSame(server.features.setting, { enable: false });
  t.strictSame(server.features.purge, { enable: false, workerCount: 2 });
  t.strictSame(server.features.heartbeat, { enable: false });
  t.strictSame(server.features.nodelist, { enable: false });
  t.strictSame(server.events.onSettingLoad.backup, { enable: false, hostname: '', auto: true, timeout: 30 });
  t.strictSame(server.events.onPurgeRequest.propagation, { enable: false, nodelist: [] });
});

t.test('the global logs get the defaults of document 3', async (t) => {
  const log = s.env.log;
  const common = { enable: true, rolling: {}, retention: 5, compression: false };
  // The deprecated logs are off, as in document 3's sample.
  const deprecated = { ...common, enable: false };
  t.strictSame(log.meta, { dir: 'svclog', port: 8514 });
  t.strictSame(log.info, { ...common, dir: null, backup: [] });
  t.strictSame(log.watch, { ...common, dir: null, backup: [], events: { setting: { enable: true, fullsync: 30 } } });
  t.strictSame(log.error, { ...common, dir: null, backup: [], filter: { minLevel: 'Info', patterns: { include: [], exclude: [] } } });
  t.strictSame(log.metrics, { ...common, dir: null, backup: [], schedule: '0 */5 * * * *' });
  t.strictSame(log.system, deprecated);
  t.strictSame(log.originError, { ...deprecated, warning: false });
  t.strictSame(log.repository, { concurrent: 1, list: [] });
});

t.test('functions get the network, cache, hook, log and pagedesk defaults', async (t) => {
  const f = s.functions;
  t.strictSame(f.network.http.frontEnd, {
    maxUrlLength: 8192, maxHeaderSize: 16384, maxHeaderCount: 2000, keepAliveTimeout: 60, headersTimeout: 10, requestTimeout: 300,
    bufferBodyUpTo: 65536, bodyMinRate: { bytesPerSecond: 500, period: 20 },
    http2: { enable: true, cleartext: false, maxConcurrentStreams: 128, maxHeaderListSize: 65536, initialWindowSize: 65535, settingsTimeout: 10 },
    bypass: { postMethod: { enable: true }, noCacheRequest: { enable: false }, matchingList: [] },
    modify: { matchingList: [] },
    accessControl: { enable: false, default: 'allow', caseSensitive: true, matchingList: [] },
    answerFields: { requestId: { enable: false, name: 'x-ctx-id' }, nodeName: { enable: false, name: 'x-svc-node', value: null } },
  });
  t.strictSame(f.network.http.backEnd, {
    session: { connectTimeout: 3, receiveTimeout: 10, reuseTimeout: 60, maxConnections: 256 },
    health: { failCount: 3, recoveryInterval: 5, inactiveTtl: 600 },
    forwardedFor: true,
    modify: { matchingList: [] },
  });
  t.strictSame(f.network.cache, {
    ttl: { default: 0, negative: 10, negativeServerErrors: false, heuristicFraction: 0.1, heuristicMax: 86400, keep: 3600 },
    honourNoCache: true, honourPrivate: true, storeSetCookie: false,
    cacheStatus: { enable: true, name: 'svc', key: false },
    cachingKey: {
      caseSensitive: true, queryString: { enable: true, sort: false, ignore: [], keep: [] }, headers: [],
      postMethod: { enable: false, bodySensitive: false, bodyContentLengthMax: 102400 },
    },
    compression: { useOriginEncoding: true },
    purge: { purge2expire: 'NONE', resCodeNoCtrlTarget: 200 },
    enablePurgeMethod: false,
    tags: { enable: true, fields: ['Surrogate-Key', 'Cache-Tag'], strip: true },
    limitMaxRange: 67108864,
    partSize: 4194304,
  });
  t.strictSame(f.hook, {
    enable: false,
    skipIfMatched: { accessControl: false, bypass: false },
    matchingList: null,
    methodSwitchable: false,
    session: { connectTimeout: 3, receiveTimeout: 3, reuseTimeout: 60, param: null },
    log: { enable: true },
  });
  const common = { enable: true, rolling: {}, retention: 10, compression: false, unify: false, backup: [] };
  t.strictSame(f.operations.log, {
    meta: { dir: '/svclog' },
    access: { ...common, xff: 'all', form: 'svc', format: null, loopback: false },
    origin: { ...common, loopback: false },
    dns: common,
    monitoring: { ...common, enable: false, form: 'json' },
  });
});

t.test('pagedesk is off with the keyword pagedesk and every section default', async (t) => {
  const p = s.functions.contents.pagedesk;
  t.strictSame(p.meta, { enable: false, keyword: 'pagedesk', maxSourceSize: 1, maxDomSourceSize: 0, urlScheme: null });
  t.strictSame(p.template, { enable: false, list: [] });
  t.strictSame(p.replace, { pre: { enable: false, list: [] }, post: { enable: false, list: [] } });
  t.strictSame(p.html, { enable: false, in: { at: null, escaped: true }, out: { at: null, escaped: true } });
  t.strictSame(p.dom, {
    extract: { enable: false, selector: null, attribute: null, includeSelf: false },
    insert: { enable: false, action: 'appendChild', list: [] },
    remove: { enable: false, includeChild: true, elements: [] },
    anchor: { enable: false, enableLink: true, target: { framename: '_blank', overwrite: true }, matchingList: [] },
    refctrl: { enable: false, mode: 'whitelist', domains: [], tags: [] },
  });
});

t.test('a host gets enable, listen *:80, mode, fallbacks and https options defaults', async (t) => {
  t.strictSame(s.hosting[0], {
    name: 'a.com',
    enable: true,
    listen: '*:80',
    mode: { volatile: false, nonVolatileSize: '0', facadeHost: null },
    origin: { protocol: 'http', address: ['127.0.0.1:8080'], address2: [] },
    fallbacks: { enable: false, matchingList: [] },
    httpsOptions: {
      listen: '*:443', enableTls13: true, enableTls12: true, enableTls11: false, enableTls10: false, enableSsl30: false,
      ciphersuite: 'ALL:!ADH:RC4+RSA:+HIGH:+MEDIUM:+LOW:+SSLv2:+EXP', forwardSecrecy: true, ocspStapling: true,
    },
  });
});

t.test('the resolved host listens on every address at port 80 with the global functions', async (t) => {
  const [h] = resolveHosts(s);
  t.strictSame(h!.listen, { host: null, port: 80 });
  t.strictSame(h!.aliases, []);
  t.strictSame(h!.mode, { volatile: false, nonVolatileSize: 0, facadeHost: null });
  t.strictSame(h!.urlRewrites, []);
  t.strictSame(h!.https, []);
  t.strictSame(h!.functions, s.functions);
});

t.test('fallback entries and urlRewrites get their item defaults', async (t) => {
  const set = parseSetting({
    hosting: [{
      ...minimal().hosting[0],
      fallbacks: { enable: true, matchingList: [{ resCodes: ['5xx'] }] },
      urlRewrites: [{ pattern: '$URL[^/a$]', replace: '/b' }],
    }],
  });
  t.strictSame(set.hosting[0]!.fallbacks.matchingList, [{ phase: 'frontend', resCodes: ['5xx'], serviceCode: '#LAST' }]);
  t.strictSame(set.hosting[0]!.urlRewrites, [{ pattern: '$URL[^/a$]', replace: '/b', caseSensitive: true }]);
});

t.test('an empty file is a valid setting without hosts', async (t) => {
  t.strictSame(parseSetting({}).hosting, []);
});

t.test('a relative env.home resolves against the directory of the setting file', async (t) => {
  const set = parseSetting({ env: { home: 'var' } }, { baseDir: '/srv/edge' });
  t.equal(set.env.home, '/srv/edge/var');
  t.equal(resolvePath(set, 'cache/index.sqlite'), '/srv/edge/var/cache/index.sqlite');
});
