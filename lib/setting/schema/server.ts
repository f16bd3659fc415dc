// `env.management.server`: synchronisation with a central server (document 2). Connections,
// feeds and feedbacks carry an `info` object whose members depend on `type`; the main schema
// accepts any `info` and the tables below check it per type in a second pass (see ../tagged.ts),
// so that an error names the member of the right shape instead of every alternative.
import { Type, type TSchema } from 'typebox';
import { Bool, Formatted, Int, List, Loose, Obj, OneOf, Opt, Secs, Section, Str } from './common.js';

const CONNECTION_TYPES = ['kafka', 'cloudCPubsub', 'httpCloudASig4', 'cloudAsdk3', 'cloudB', 'cloudAdb'] as const;

const S = () => Str({ minLength: 1 });
const Cron = () => Formatted('svc-cron', { description: 'cron schedule, six fields with seconds first (five allowed)' });
/** Seconds of the HTTP transaction of a call (the spec does not give the unit). */
const Timeout = () => Secs(10, 'seconds');

export const CONNECTION_INFO: Record<string, TSchema> = {
  kafka: Obj({ clientId: S(), brokers: Type.Array(S(), { minItems: 1, description: 'host:port' }) }),
  cloudCPubsub: Obj({
    apiKey: S(), authDomain: Opt(Str()), databaseUrl: Opt(Str()), projectId: S(),
    storageBucket: Opt(Str()), messagingSenderId: Opt(Str()), appId: Opt(Str()),
  }),
  httpCloudASig4: Obj({
    accessKeyId: S(), secretAccessKey: S(), region: S(),
    bucket: Str({ default: '', description: 'may be empty when used only for authentication' }),
    endpoint: Opt(Str({ description: 'URL base of an S3-compatible store (path style); absent: the vendor, virtual-hosted style' })),
  }),
  cloudAsdk3: Obj({
    accessKeyId: S(), secretAccessKey: S(), region: S(),
    endpoint: Opt(Str({ description: 'URL of the EC2 Query API; absent: https://ec2.<region>.amazonaws.com/' })),
  }),
  cloudB: Obj({
    tenancyId: S(), userId: S(), compartmentId: Opt(Str()), fingerprint: S(),
    privateKey: Str({ minLength: 1, description: 'key file name' }), region: S(),
    useLoadBalance: Bool(false), loadBalancerId: Opt(Str()), loadBalancerType: Opt(OneOf(['NLB', 'ALB'])),
  }),
  cloudAdb: Obj({
    accessKeyId: Str({ default: '#IAMROLE', description: '#IAMROLE: the cloud role credential' }),
    secretAccessKey: Str({ default: '#IAMROLE' }),
    region: S(),
  }),
};

/** An info shape and the connection type its `connect` must name (if it has one). */
export interface TaggedInfo { schema: TSchema; connect?: string }

const polling: TaggedInfo = { schema: Obj({ url: S(), schedule: Cron(), timeout: Timeout() }) };
const kafkaSub: TaggedInfo = {
  schema: Obj({ connect: S(), groupId: S(), subscribe: Obj({ topic: S(), fromBeginning: Bool(false) }) }),
  connect: 'kafka',
};
const cloudCdoc: TaggedInfo = {
  schema: Obj({ connect: S(), doc: Str({ minLength: 1, description: '#svclive.nodeId is replaced by the node id' }) }),
  connect: 'cloudCPubsub',
};
const api: TaggedInfo = { schema: Obj({ url: S(), timeout: Timeout() }) };
const kafkaPub: TaggedInfo = { schema: Obj({ connect: S(), topic: S() }), connect: 'kafka' };

export const SETTING_FEED: Record<string, TaggedInfo> = { apiPolling: polling, tgzPolling: polling, kafkaSub, cloudCdoc };
export const SETTING_FEEDBACK: Record<string, TaggedInfo> = { api, kafkaPub, cloudCdoc };
export const PURGE_FEED: Record<string, TaggedInfo> = { apiPolling: polling, kafkaSub };
export const PURGE_FEEDBACK: Record<string, TaggedInfo> = { api, kafkaPub };
export const HEARTBEAT_FEEDBACK: Record<string, TaggedInfo> = {
  apiPolling: { schema: Obj({ url: S(), timeout: Timeout(), schedule: Cron() }) },
  kafkaPub: { schema: Obj({ connect: S(), topic: S(), schedule: Cron() }), connect: 'kafka' },
  cloudCdoc: { schema: Obj({ connect: S(), doc: S(), schedule: Cron() }), connect: 'cloudCPubsub' },
};
const nodelistFeed = (connect: string): TaggedInfo => ({
  schema: Obj({ connect: S(), tag: Str({ description: 'key=value; or key=; several separated by ;' }), schedule: Cron() }),
  connect,
});
export const NODELIST_FEED: Record<string, TaggedInfo> = { cloudAsdk3: nodelistFeed('cloudAsdk3'), cloudB: nodelistFeed('cloudB') };

const Tagged = <const T extends string[]>(types: readonly [...T]) => Obj({ type: OneOf(types), info: Loose() });

export const ServerSchema = Section({
  enable: Bool(false),
  connection: Opt(Type.Array(Obj({ name: S(), type: OneOf(CONNECTION_TYPES), info: Loose() }), {
    description: 'connections shared by features and events; names are unique',
  })),
  features: Section({
    setting: Section({
      enable: Bool(false),
      feed: Opt(Tagged(['apiPolling', 'tgzPolling', 'kafkaSub', 'cloudCdoc'])),
      feedback: Opt(Obj({
        type: OneOf(['api', 'kafkaPub', 'cloudCdoc']),
        info: Loose(),
        uploadSetting: Bool(true, 'the feedback message carries the loaded setting.json'),
      })),
    }),
    purge: Section({
      enable: Bool(false),
      workerCount: Int(2, { minimum: 0, description: '0: as many workers as CPUs' }),
      feed: Opt(Tagged(['apiPolling', 'kafkaSub'])),
      feedback: Opt(Tagged(['api', 'kafkaPub'])),
    }),
    heartbeat: Section({
      enable: Bool(false),
      feedback: Opt(Tagged(['apiPolling', 'kafkaPub', 'cloudCdoc'])),
    }),
    nodelist: Section({
      enable: Bool(false, 'deprecated'),
      feed: Opt(Tagged(['cloudAsdk3', 'cloudB'])),
      feedback: Opt(Obj({
        type: Type.String({ pattern: '^(?:setting|api)(?:;(?:setting|api))*;?$', description: 'setting, api or setting;api;' }),
        info: Section({
          hosting: Opt(Type.Array(Obj({ name: S(), field: OneOf(['origin.address']) }))),
          url: Opt(S()),
          timeout: Secs(10, "seconds"),
        }),
      })),
    }),
  }),
  events: Section({
    onSettingLoad: Section({
      backup: Section({
        enable: Bool(false),
        hostname: Str({ default: '', description: 'only the node of this host name backs up; empty: every node' }),
        auto: Bool(true, 'back up after every setting change; false: explicit backup'),
        connect: Opt(Str({ description: 'name of an httpCloudASig4 connection' })),
        path: Opt(Str()),
        timeout: Secs(30, 'seconds; a failed backup is retried'),
      }),
    }),
    onPurgeRequest: Section({
      propagation: Section({
        enable: Bool(false),
        nodelist: List(Formatted('svc-member'), { maxItems: 8, description: 'IPs of the nodes, itself included' }),
      }),
    }),
  }),
});
