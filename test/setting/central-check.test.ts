// Validation of env.management.server: what needs a vendor SDK this build lacks is refused at its
// JSON path, as are schedules the cron reader cannot read and a backup without a bucket.
import t from 'tap';
import { issuesOf, minimalHost } from './fixtures/helpers.js';

const refused = (server: unknown): string[] => issuesOf({ env: { management: { server } }, hosting: [minimalHost] }).map((i) => `${i.path}: ${i.message}`);
const kafka = { name: 'k', type: 'kafka', info: { clientId: 'edge', brokers: ['127.0.0.1:9092'] } };
const pubsub = { name: 'p', type: 'cloudCPubsub', info: { apiKey: 'x', projectId: 'y' } };
const oci = { name: 'o', type: 'cloudB', info: { tenancyId: 't', userId: 'u', fingerprint: 'f', privateKey: 'k.pem', region: 'r' } };
const s3 = { name: 's', type: 'httpCloudASig4', info: { accessKeyId: 'a', secretAccessKey: 'b', region: 'us-east-1', bucket: 'bk', endpoint: 'http://127.0.0.1:9000' } };
const ec2 = { name: 'e', type: 'cloudAsdk3', info: { accessKeyId: 'a', secretAccessKey: 'b', region: 'us-east-1', endpoint: 'http://127.0.0.1:9001/' } };
const polling = { url: 'http://127.0.0.1:1/feed', schedule: '*/15 * * * * *', timeout: 5 };

t.test('every feature this build runs is accepted, endpoints of the test stores included', async (t) => {
  t.same(refused({
    enable: true, connection: [kafka, s3, ec2],
    features: {
      setting: { enable: true, feed: { type: 'apiPolling', info: polling }, feedback: { type: 'api', info: { url: 'http://127.0.0.1:1/fb', timeout: 5 } } },
      purge: { enable: true, workerCount: 0, feed: { type: 'kafkaSub', info: { connect: 'k', groupId: 'g', subscribe: { topic: 'p' } } }, feedback: { type: 'kafkaPub', info: { connect: 'k', topic: 'r' } } },
      heartbeat: { enable: true, feedback: { type: 'apiPolling', info: polling } },
      nodelist: { enable: true, feed: { type: 'cloudAsdk3', info: { connect: 'e', tag: 'role=edge;', schedule: '0 * * * * *' } }, feedback: { type: 'setting;api;', info: { hosting: [{ name: 'a.com', field: 'origin.address' }], url: 'http://127.0.0.1:1/nl' } } },
    },
    events: { onSettingLoad: { backup: { enable: true, connect: 's', path: 'edge' } } },
  }), []);
});

t.test('cloudCdoc feeds and feedbacks are refused: not supported by this build', async (t) => {
  const doc = { connect: 'p', doc: 'nodes/x' };
  t.same(refused({ connection: [pubsub], features: { setting: { feed: { type: 'cloudCdoc', info: doc }, feedback: { type: 'cloudCdoc', info: doc } } } }), [
    'env.management.server.features.setting.feed.type: cloudCdoc is not supported by this build: it needs the vendor SDK and its network (cloudCPubsub)',
    'env.management.server.features.setting.feedback.type: cloudCdoc is not supported by this build: it needs the vendor SDK and its network (cloudCPubsub)',
  ]);
  t.same(refused({ connection: [pubsub], features: { heartbeat: { feedback: { type: 'cloudCdoc', info: { ...doc, schedule: '0 * * * * *' } } } } }), [
    'env.management.server.features.heartbeat.feedback.type: cloudCdoc is not supported by this build: it needs the vendor SDK and its network (cloudCPubsub)',
  ]);
});

t.test('a cloudB node list is refused: it needs the vendor SDK', async (t) => {
  t.same(refused({ connection: [oci], features: { nodelist: { feed: { type: 'cloudB', info: { connect: 'o', tag: 'a=b;', schedule: '0 * * * * *' } } } } }), [
    'env.management.server.features.nodelist.feed.type: cloudB is not supported by this build: needs the vendor SDK',
  ]);
});

t.test('a schedule in another cron dialect and a bad endpoint are refused at their paths', async (t) => {
  t.same(refused({ features: { heartbeat: { feedback: { type: 'apiPolling', info: { ...polling, schedule: '0 0 L * * *' } } } } }).map((l) => l.split(':')[0]),
    ['env.management.server.features.heartbeat.feedback.info.schedule']);
  t.same(refused({ connection: [{ ...ec2, info: { ...ec2.info, endpoint: 'ftp://x' } }] }),
    ['env.management.server.connection[0].info.endpoint: must be an http:// or https:// URL']);
});

t.test('a backup to a connection without a bucket is refused', async (t) => {
  t.same(refused({ connection: [{ ...s3, info: { ...s3.info, bucket: '' } }], events: { onSettingLoad: { backup: { enable: true, connect: 's', path: 'p' } } } }),
    ['env.management.server.events.onSettingLoad.backup.connect: connection "s" has no bucket to back up to']);
});
