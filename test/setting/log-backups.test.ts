// Validation of the backup repositories and of the logs naming them: each bad value is refused
// at its JSON path with what to change.
import t from 'tap';
import { issuesOf, minimalHost } from './fixtures/helpers.js';

const refused = (input: unknown): string[] => issuesOf(input, undefined, false).map((i) => `${i.path}: ${i.message}`);
const s3 = { bucket: 'b', region: 'us-east-1', domain: null, accessKey: 'k', secretKey: 's' };
const withRepo = (repo: Record<string, unknown>, hostLog: Record<string, unknown> = {}) => ({
  env: { log: { repository: { list: [{ name: 'r', rolling: '* *', path: 'logs/{domain}/{timestamp}.log', ...repo }] } } },
  hosting: [{ ...minimalHost, functions: { operations: { log: { access: { backup: ['r'], rolling: { size: 1 } }, ...hostLog } } } }],
});

t.test('a repository of every type with a valid endpoint is accepted', async (t) => {
  t.same(refused(withRepo({ type: 'cloudA-objstore', endpoint: s3 })), []);
  t.same(refused(withRepo({ type: 'cloudA-objstore', endpoint: { ...s3, accessKey: '#IAMROLE', secretKey: '#IAMROLE' } })), []);
  t.same(refused(withRepo({ type: 'cloudD-object-storage-v1', endpoint: { bucket: 'b', region: 'r', account: 'a', accessKey: 'k', secretKey: 's' } })), []);
  t.same(refused(withRepo({ type: 'cloudC-storage', endpoint: { credential: 'gcs.json' } })), []);
  t.same(refused(withRepo({ type: 'statsd', endpoint: { exports: { enable: true, matchingList: ['^0003'] } } })), []);
  t.same(refused(withRepo({ type: 'logagent', endpoint: { url: 'http://127.0.0.1:9/push' } })), []);
});

t.test('an upload cron that is not minute and hour is refused at rolling', async (t) => {
  t.same(refused(withRepo({ type: 'cloudA-objstore', endpoint: s3, rolling: '0 */2 * * *' })), ['env.log.repository.list[0].rolling: must be two cron fields: minute hour, got "0 */2 * * *"']);
  t.same(refused(withRepo({ type: 'cloudA-objstore', endpoint: s3, rolling: 'L *' })), ['env.log.repository.list[0].rolling: minute field "L": each part must be *, n, a-b, */n or a-b/n']);
  t.match(refused(withRepo({ type: 'cloudA-objstore', endpoint: s3, rolling: '75 *' })), [/^env\.log\.repository\.list\[0\]\.rolling: minute field "75"/]);
});

t.test('a path variable document 3 does not define is refused', async (t) => {
  t.same(refused(withRepo({ type: 'cloudA-objstore', endpoint: s3, path: '{Domain}/{timestamp.week}' })),
    ['env.log.repository.list[0].path: unknown path variable {Domain}, {timestamp.week}']);
});

t.test('an export filter turned on with no pattern is refused', async (t) => {
  t.same(refused(withRepo({ type: 'statsd', endpoint: { exports: { enable: true, matchingList: [] } } })).map((i) => i.split(':')[0]),
    ['env.log.repository.list[0].endpoint.exports.matchingList']);
  t.same(refused(withRepo({ type: 'logagent', endpoint: { url: 'http://x/', exports: { enable: true } } })).map((i) => i.split(':')[0]),
    ['env.log.repository.list[0].endpoint.exports.matchingList']);
});

t.test('a logagent url that is not http(s) is refused', async (t) => {
  t.same(refused(withRepo({ type: 'logagent', endpoint: { url: 'udp://x:1' } })), ['env.log.repository.list[0].endpoint.url: must be an http:// or https:// URL']);
});

t.test('cloudC needs a key it can sign with and a bucket at the start of the path', async (t) => {
  t.same(refused(withRepo({ type: 'cloudC-storage', endpoint: { client_email: 'a@b' } })).map((i) => i.split(':')[0]), ['env.log.repository.list[0].endpoint']);
  t.same(refused(withRepo({ type: 'cloudC-storage', endpoint: { client_email: 'a@b', private_key: 'nope' } })), ['env.log.repository.list[0].endpoint.private_key: is not a PEM private key']);
  t.same(refused(withRepo({ type: 'cloudC-storage', endpoint: { credential: 'k.json' }, path: '{domain}/x' })).map((i) => i.split(':')[0]), ['env.log.repository.list[0].path']);
});

t.test('a host log backed up without rolling is refused: a repository receives rolled files', async (t) => {
  const input = withRepo({ type: 'cloudA-objstore', endpoint: s3 }, { origin: { backup: ['r'] } });
  t.same(refused(input), ['hosting[0].functions.operations.log.origin.rolling: host a.com backs its origin log up to r; a repository receives rolled files: set rolling.time or rolling.size']);
});
