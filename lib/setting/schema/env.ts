// `env`: settings that need a restart. `home`, `linkedFileDirs`, `cache` and `license` are ours
// (the spec shows no field for where the node keeps its state and may write linked files, how
// big its cache is, or where its license is).
import { Type } from 'typebox';
import { List, Obj, Section, Size, Str } from './common.js';
import { EnvLogSchema } from './log.js';
import { ApiSchema, ClusterSchema } from './management.js';
import { ServerSchema } from './server.js';

const CacheSchema = Section({
  memorySize: Size('256mb', 'memory cache capacity'),
  memoryObjectMax: Size('8mb', 'largest object kept in the memory cache'),
  maxObjectSize: Size('2gb', 'largest object cached at all; larger responses are passed through'),
  disks: Type.Array(Obj({
    path: Str({ minLength: 1, description: 'directory of cached bodies, relative to env.home' }),
    quota: Size('10gb', 'bytes this disk may hold'),
  }), { default: [{ path: 'cache/disk0', quota: '10gb' }], description: 'disk cache directories' }),
  indexPath: Str({ default: 'cache/index.sqlite', minLength: 1, description: 'SQLite cache index, relative to env.home' }),
}, 'memory and disk cache');

export const EnvSchema = Section({
  home: Str({
    default: '/usr/local/svc',
    minLength: 1,
    description: 'base directory; relative paths elsewhere resolve against it; a relative home resolves against the directory of the setting file',
  }),
  linkedFileDirs: List(Str({ minLength: 1 }), {
    description: 'directories besides env.home where linked files (certificates, basehost files) may live; relative ones resolve against env.home (ours)',
  }),
  cache: CacheSchema,
  log: EnvLogSchema,
  management: Section({ api: ApiSchema, server: ServerSchema, cluster: ClusterSchema }),
  license: Section({
    path: Str({ default: 'license.xml', minLength: 1, description: 'the installed license (signed XML), relative to env.home; written by /setting/license/update' }),
    publicKey: Str({ default: 'license.pub', minLength: 1, description: 'PEM public key (Ed25519 or RSA) licenses are verified against, relative to env.home' }),
  }, 'license file and issuer key (ours)'),
  install: Section({
    repository: Type.Union([Type.Null(), Str({ minLength: 1 })], {
      default: null,
      description: 'release repository of /command/install: a directory (relative to env.home) or an http(s) URL holding svc release output (index.json, <name>-<version>.tgz, .sha256, .sig); null = install refused',
    }),
    publicKey: Str({ default: 'release.pub', minLength: 1, description: 'PEM Ed25519 public key release packages are verified against, relative to env.home' }),
  }, 'package installation (ours)'),
  geoip: Section({
    path: Type.Union([Type.Null(), Str({ minLength: 1 })], { default: null, description: 'directory of MaxMind .mmdb files (/monitoring/geoiplist), relative to env.home; null = not configured' }),
  }, 'GeoIP databases (ours)'),
});
