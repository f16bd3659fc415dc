// Log settings (document 3): per-host logs under `functions.operations.log`, global logs under
// `env.log`, and the backup repositories under `env.log.repository`.
import { Type, type TProperties, type TSchema } from 'typebox';
import { Bool, Formatted, Int, List, Loose, NullStr, Obj, OneOf, Opt, Rolling, Section, Str } from './common.js';

/** Names of `env.log.repository.list[]` entries the log is copied to in near real time. */
const Backup = () => List(Str({ minLength: 1 }), { description: 'names of env.log.repository.list entries' });

function hostLog<P extends TProperties>(extra: P, enable = true) {
  return Section({
    enable: Bool(enable),
    rolling: Rolling(),
    retention: Int(10, { minimum: 1, description: 'maximum number of kept files' }),
    compression: Bool(false, 'gzip at roll'),
    unify: Bool(false, 'one file for all hosts in meta.dir instead of one per host'),
    backup: Backup(),
    ...extra,
  });
}

export const HostLogSchema = Section({
  meta: Section({ dir: Str({ default: '/svclog', description: 'each host writes into a sub-directory named after it' }) }),
  access: hostLog({
    xff: OneOf(['all', 'clientIp', 'trimClientIp'], 'all'),
    form: OneOf(['svc', 'weblogA', 'weblogB', 'custom'], 'svc'),
    format: NullStr({ description: 'custom form: the format string' }),
    loopback: Bool(false, 'record loopback traffic'),
  }),
  origin: hostLog({ loopback: Bool(false) }),
  dns: hostLog({}),
  // Off as in the sample of document 3.
  monitoring: hostLog({ form: OneOf(['json', 'xml'], 'json') }, false),
});

const globalCommon = (enable = true) => ({
  enable: Bool(enable, enable ? undefined : 'deprecated: off as in the sample of document 3'),
  rolling: Rolling(),
  retention: Int(5, { minimum: 1 }),
  compression: Bool(false),
});

function globalLog<P extends TProperties>(extra: P, enable = true) {
  return Section({
    ...globalCommon(enable),
    dir: NullStr({ description: 'null: env.log.meta.dir' }),
    backup: Backup(),
    ...extra,
  });
}

/** The deprecated global logs have no dir and no backup. */
function deprecatedLog<P extends TProperties>(extra: P) {
  return Section({ ...globalCommon(false), ...extra });
}

const ERROR_LEVELS = ['Emergency', 'Alert', 'Critical', 'Error', 'Warning', 'Notice', 'Info', 'Debug'] as const;

const Regexes = () => List(Formatted('svc-regex'));

const REPOSITORY_TYPES = ['cloudA-objstore', 'cloudC-storage', 'cloudD-object-storage-v1', 'statsd', 'logagent'] as const;

const Exports = (matchingList: TSchema) => Section({
  enable: Bool(false, 'false sends every event; true only those matching'),
  matchingList,
});

/** Endpoint shape per repository type, checked in a second pass (../tagged.ts). */
export const REPOSITORY_ENDPOINT: Record<string, TSchema> = {
  'cloudA-objstore': Obj({
    bucket: Str({ minLength: 1 }), region: Str(),
    domain: NullStr({ description: 'null: the vendor cloud; otherwise an S3-compatible store' }),
    accessKey: Str({ description: '#IAMROLE: role credential' }), secretKey: Str(),
  }),
  'cloudC-storage': Obj({
    project_id: Opt(Str()), private_key_id: Opt(Str()), private_key: Opt(Str()), client_email: Opt(Str()),
    client_id: Opt(Str()), client_x509_cert_url: Opt(Str()),
    credential: Opt(Str({ description: 'path of a credential file, instead of the members above' })),
  }),
  'cloudD-object-storage-v1': Obj({
    bucket: Str({ minLength: 1 }), region: Str(), account: Str(), accessKey: Str(), secretKey: Str(),
    // Not in document 3: the URL base of another S3-compatible endpoint of the vendor (lib/log/repository/s3.ts).
    domain: Opt(NullStr({ description: "null: the vendor's S3-compatibility endpoint of the account and region" })),
  }),
  statsd: Obj({ port: Int(8125, { minimum: 1, maximum: 65535 }), exports: Exports(List(Formatted('svc-regex'))) }),
  logagent: Obj({
    url: Str({ minLength: 1 }),
    exports: Exports(Type.Union([Type.Array(Formatted('svc-regex')), Type.Null()], { default: null })),
  }),
};

export const EnvLogSchema = Section({
  meta: Section({
    dir: Str({ default: 'svclog', description: 'management log directory, relative to env.home' }),
    port: Int(8514, { minimum: 1, maximum: 65535, description: 'UDP port (127.0.0.1) collecting log lines from sub-components' }),
  }),
  info: globalLog({}),
  watch: globalLog({
    events: Section({
      setting: Section({
        enable: Bool(true),
        fullsync: Int(30, { minimum: 0, description: 'days: backup period after the last host-setting sync' }),
      }),
    }),
  }),
  error: globalLog({
    filter: Section({
      minLevel: OneOf(ERROR_LEVELS, 'Info'),
      patterns: Section({ include: Regexes(), exclude: Regexes() }),
    }),
  }),
  metrics: globalLog({ schedule: Formatted('svc-cron', { default: '0 */5 * * * *' }) }),
  system: deprecatedLog({}),
  originError: deprecatedLog({ warning: Bool(false, 'also record wrong HTTP exchanges') }),
  repository: Section({
    concurrent: Int(1, { minimum: 1, description: 'kept as specification only; no effect' }),
    list: List(Obj({
      name: Str({ minLength: 1 }),
      type: OneOf(REPOSITORY_TYPES),
      rolling: Formatted('svc-cron2', { description: 'upload time: minute hour' }),
      path: Str({ minLength: 1, description: 'upload path template' }),
      compression: Section({ enable: Bool(false) }),
      endpoint: Loose('shape depends on type'),
    })),
  }),
});
