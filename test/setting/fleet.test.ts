// Fleet settings: what this build cannot honour is refused at its JSON path, by validation and
// upload alike (both parse with the same checks).
import t from 'tap';
import { issuesOf, minimalHost } from './fixtures/helpers.js';

const refused = (env: unknown): string[] => issuesOf({ env, hosting: [minimalHost] }).map((i) => `${i.path}: ${i.message}`);
const propagation = (nodelist: string[]) => ({ management: { server: { events: { onPurgeRequest: { propagation: { enable: true, nodelist } } } } } });

t.test('discovery with a secret, unicast members and a bus are accepted', async (t) => {
  t.same(refused({ management: { cluster: {
    discover: { enable: true, secret: 's3cret', members: ['10.0.0.2', '10.0.0.3:9901'], listen: '10.0.0.1', period: 2 },
    bus: { enable: true, url: 'redis://10.0.0.9:6379/0', stream: 'edge:inv', node: 'edge-1' },
  } } }), []);
  t.same(refused(propagation(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6', '10.0.0.7', '10.0.0.8'])), [], 'eight nodes');
});

t.test('a cloud dynamic discovery member is refused at its JSON path until a resolver exists', async (t) => {
  const issues = refused({ management: { cluster: { discover: { members: ['10.0.0.2', '#cloudB:vm:tag=edge#:9900'] } } } });
  t.equal(issues.length, 1);
  t.match(issues[0], /^env\.management\.cluster\.discover\.members\[1\]: cloud dynamic member "#cloudB:vm:tag=edge#:9900" is not supported by this build/);
});

t.test('a cloud dynamic propagation node is refused at its JSON path', async (t) => {
  t.match(refused(propagation(['#cloudA:vm:tag=x'])), [/^env\.management\.server\.events\.onPurgeRequest\.propagation\.nodelist\[0\]: cloud dynamic member/]);
});

t.test('a cloud dynamic origin address is refused at its JSON path: the origin set has no resolver either', async (t) => {
  const issues = issuesOf({ hosting: [{ ...minimalHost, origin: { address: ['10.0.0.1'], address2: ['#cloudA:vm:tag=web#:8080', '#cloudA:me:region'] } }] });
  t.strictSame(issues.map((i) => i.path), ['hosting[0].origin.address2[0]', 'hosting[0].origin.address2[1]']);
  t.match(issues[0]!.message, /cloud dynamic origin "#cloudA:vm:tag=web#:8080" is not supported by this build/);
});

t.test('a ninth propagation node is refused at the nodelist path', async (t) => {
  const nine = Array.from({ length: 9 }, (_, i) => `10.0.0.${i + 1}`);
  const issues = refused(propagation(nine));
  t.equal(issues.length, 1, issues.join('\n'));
  t.match(issues[0], /^env\.management\.server\.events\.onPurgeRequest\.propagation\.nodelist: .*8/);
});

t.test('discovery turned on without a secret is refused: an unsigned fleet would let anyone join', async (t) => {
  t.match(refused({ management: { cluster: { discover: { enable: true } } } }), [/^env\.management\.cluster\.discover\.secret: discovery needs a shared secret/]);
  t.same(refused({ management: { cluster: { discover: { enable: false } } } }), [], 'off, it needs none');
});

t.test('a bad discovery listen address, a bus URL that is not Redis and a bad propagation node are refused', async (t) => {
  t.match(refused({ management: { cluster: { discover: { listen: 'eth0' } } } }), [/^env\.management\.cluster\.discover\.listen: must be an IP address/]);
  t.match(refused({ management: { cluster: { bus: { enable: true, url: 'http://10.0.0.9' } } } }), [/^env\.management\.cluster\.bus\.url: must be a redis:\/\/ or rediss:\/\/ URL/]);
  t.match(refused(propagation(['edge-2.example'])), [/^env\.management\.server\.events\.onPurgeRequest\.propagation\.nodelist\[0\]: must be \{IP\}/]);
});
