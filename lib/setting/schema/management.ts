// `env.management.api` (document 1) and `env.management.cluster` (document 2).
import { Type } from 'typebox';
import { Bool, Formatted, Int, NullStr, Obj, OneOf, Opt, Secs, Section, Size, Str } from './common.js';

const Permissions = Section({
  enableSetting: Bool(false, 'gates /setting'),
  enablePurge: Bool(false, 'gates the invalidation commands'),
  enableMetric: Bool(false, 'gates /metrics'),
  enableGraph: Bool(false, 'gates /graph'),
  enableMonitoring: Bool(false, 'gates /monitoring and the other query endpoints'),
  enableInstall: Bool(false, 'gates install / reinstall'),
  enableRestart: Bool(false, 'gates restart and stop'),
  enableGet: Bool(true, 'gates /get'),
  enableCluster: Bool(false, 'gates the cluster command'),
});

/** The initial roles of document 1; a role of the file with the same name replaces one. */
export const INITIAL_ROLES = [
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
];

export const TLS_VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;

export const ApiSchema = Section({
  port: Int(10040, { minimum: 1, maximum: 65535, description: 'management port; the RT control port is this minus 1' }),
  defaultRole: Str({ default: 'admin', description: 'role of an allowList entry without role' }),
  multipartName: Str({ default: 'settingFile', minLength: 1, description: 'multipart part name of setting upload' }),
  asyncQueueMax: Int(10000, { minimum: 1, description: 'asynchronous invalidation commands that may wait at once (ours)' }),
  asyncInterval: Int(0, { minimum: 0, description: 'milliseconds between two asynchronous invalidation commands, to spare the origin (ours)' }),
  upload: Section({
    maxUnpackedSize: Size('64mb', 'largest size a setting package may unpack to (its tar content: files and tar headers); a larger one is refused with error 2'),
    maxFiles: Int(1000, { minimum: 1, description: 'most files and directories a setting package (or a multipart upload) may hold; more are refused with error 2' }),
  }, 'bounds of the setting packages the node unpacks (ours)'),
  allowList: Opt(Type.Array(Obj({
    role: Opt(Str()),
    addr: Formatted('svc-allow', { description: 'IP, range a.b.c.1-255, bitmask a.b.c.0/24 or subnet a.b.c.0/255.255.255.0' }),
  }))),
  roles: Type.Array(Obj({ name: Str({ minLength: 1 }), permissions: Permissions }), {
    default: INITIAL_ROLES,
    description: 'roles; the initial admin and user roles exist unless a role of the same name replaces them',
  }),
  https: Opt(Obj({
    cert: Str({ minLength: 1, description: 'certificate file path' }),
    key: Str({ minLength: 1, description: 'key file path' }),
    ca: Opt(Str()),
    options: Section({
      listen: Opt(Formatted('svc-address', { description: 'IP:Port of the TLS management port' })),
      minVersion: OneOf(TLS_VERSIONS, 'TLSv1.2'),
      maxVersion: OneOf(TLS_VERSIONS, 'TLSv1.3', 'not below minVersion'),
      ciphersuite: Str({ default: 'HIGH:!aNULL:!MD5' }),
      forwardSecrecy: Bool(true, 'true: forward-secret suites preferred, server order; false: ClientHello order'),
      enableHttp: Bool(true, 'false closes the plain HTTP management port'),
    }),
  }, { description: 'management TLS port, served in addition to the plain port' })),
});

export const ClusterSchema = Section({
  meta: Section({
    enable: Bool(false, 'clustering: several RT workers, restart without interruption'),
    baseHostingPort: Int(9000, { minimum: 1, maximum: 65535, description: 'worker i listens on loopback at this port + i' }),
    workers: Int(0, {
      minimum: 0,
      description: 'number of RT workers when enable is true; 0 = one per CPU core (enable false means one worker)',
    }),
    drainTimeout: Secs(30, 'seconds a retiring worker may take to finish its transactions before it is stopped'),
  }),
  discover: Section({
    enable: Bool(false, 'announce this node and listen for the others (ours: off unless asked, it needs a secret)'),
    port: Int(9900, { minimum: 1, maximum: 65535 }),
    members: Type.Union([Type.Array(Formatted('svc-member')), Type.Null()], {
      default: null,
      description: 'null: members found by broadcast; a list: unicast',
    }),
    secret: Str({ default: '', description: 'shared secret of the HMAC-SHA256 signature of the advertisements (ours); required when enable is true' }),
    listen: Formatted('svc-ip', { default: '0.0.0.0', description: 'address the discovery socket binds (ours)' }),
    period: Secs(5, 'seconds between two advertisements; a node silent for 3 periods is dropped (ours)'),
  }),
  bus: Section({
    enable: Bool(false, 'Redis invalidation bus (ours)'),
    url: Str({ default: 'redis://127.0.0.1:6379', description: 'Redis URL (redis:// or rediss://)' }),
    stream: Str({ default: 'svc:invalidations', minLength: 1, description: 'Redis Stream every node appends to and reads' }),
    node: Str({ default: '', description: 'this node\'s name on the bus (its position key); empty: the host name' }),
    startTimeout: Secs(10, 'seconds the start waits to catch up before serving anyway'),
    maxLen: Int(100000, { minimum: 1, description: 'the stream is trimmed to about this many entries (XADD MAXLEN ~)' }),
  }, 'Redis invalidation bus (ours)'),
  balance: Section({
    mode: OneOf(['rr', 'hash'], 'rr', 'rr: round robin; hash: by request URL hash'),
    luaPath: NullStr({ description: 'hash mode: Lua script that hashes; null hashes the URL' }),
    urlIgnoreList: Type.Array(Str(), { default: ['#FUNCTION'], description: 'hash mode: URL parts from a match onward are ignored' }),
  }),
  stats: Section({
    enable: Bool(true),
    listen: Formatted('svc-address', { default: '127.0.0.1:10038', description: 'statistics collector' }),
  }),
});
