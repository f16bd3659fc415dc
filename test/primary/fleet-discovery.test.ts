// Discovery at socket level, in-process: signed advertisements (HMAC-SHA256), unicast to the
// members, broadcast (loopback: a receiver bound to 127.255.255.255, as broadcast does not
// cross 127.x addresses otherwise), what is dropped and logged, and silence for 3 periods.
import dgram from 'node:dgram';
import t, { type Test } from 'tap';
import { decodeAdvertisement, encodeAdvertisement, MAX_SKEW_MS } from '../../lib/primary/fleet/advertisement.js';
import { Discovery } from '../../lib/primary/fleet/discovery.js';
import type { Setting } from '../../lib/setting/types.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait.js';

const AD = { name: 'edge-a', version: '1.2.3', buildNumber: '0', settingHash: 'abc' };

t.test('an advertisement signed with the shared secret is read back; a wrong secret, an edit or an old one is refused', async (t) => {
  const now = 1_700_000_000_000;
  const data = encodeAdvertisement('k', AD, now);
  t.match(decodeAdvertisement('k', data, now + 1000), { ...AD, time: now, signature: /^[0-9a-f]{64}$/ });
  t.same(decodeAdvertisement('other', data, now), { refused: 'bad signature' });
  const edited = Buffer.from(data.toString().replace('"edge-a"', '"edge-x"'));
  t.same(decodeAdvertisement('k', edited, now), { refused: 'bad signature' });
  t.match(decodeAdvertisement('k', data, now + MAX_SKEW_MS + 1), { refused: /more than 300 s away/ });
  t.same(decodeAdvertisement('k', Buffer.from('{"tag":"svc-discover/1","name":"x"}'), now), { refused: 'no version' });
  t.same(decodeAdvertisement('k', Buffer.from('hello'), now), { refused: 'not JSON' });
});

interface Node { d: Discovery; lines: Array<[string, Record<string, unknown>]>; clock: { now: number } }

function node(t: Test, discover: Record<string, unknown>, name: string, broadcastTargets?: () => string[]): Node {
  const setting = { env: { management: { cluster: { discover: { enable: true, secret: 'fleet-secret', period: 1, members: null, ...discover } } } } } as unknown as Setting;
  const lines: Node['lines'] = [];
  const clock = { now: Date.now() };
  const d = new Discovery({
    setting: () => setting, advertised: () => ({ ...AD, name }), info: (m, f) => lines.push([m, f]), now: () => clock.now,
    ...(broadcastTargets === undefined ? {} : { broadcastTargets }),
  });
  t.teardown(() => d.stop());
  return { d, lines, clock };
}

t.test('two nodes with each other as members list each other with address, lastSeen and the advertised fields, never themselves', async (t) => {
  const port = await freePort('127.0.0.2');
  const a = node(t, { listen: '127.0.0.2', port, members: ['127.0.0.3', '127.0.0.2'] }, 'edge-a');
  const b = node(t, { listen: '127.0.0.3', port, members: ['127.0.0.2'] }, 'edge-b');
  await a.d.start();
  await b.d.start();
  t.ok(await waitFor(() => a.d.list().length === 1 && b.d.list().length === 1), 'each hears the other');
  t.match(a.d.list(), [{ address: '127.0.0.3', lastSeen: Number, advertisement: { name: 'edge-b', version: '1.2.3', buildNumber: '0', settingHash: 'abc', signature: /^[0-9a-f]{64}$/ } }]);
  t.match(b.d.list(), [{ address: '127.0.0.2', advertisement: { name: 'edge-a' } }]);
  t.ok(a.lines.some(([m]) => m === 'discovery: node heard'), 'an info line when a node is first heard');
});

t.test('a forged or unsigned advertisement is dropped and logged once', async (t) => {
  const port = await freePort('127.0.0.4');
  const a = node(t, { listen: '127.0.0.4', port, members: [] }, 'edge-a');
  await a.d.start();
  const stranger = dgram.createSocket('udp4');
  t.teardown(() => stranger.close());
  await new Promise<void>((r) => stranger.bind(0, '127.0.0.5', () => r()));
  const send = (data: Buffer): Promise<void> => new Promise((r) => stranger.send(data, port, '127.0.0.4', () => r()));
  await send(encodeAdvertisement('guessed-secret', AD, Date.now()));
  await send(Buffer.from(JSON.stringify({ tag: 'svc-discover/1', ...AD, time: Date.now(), signature: '' })));
  t.ok(await waitFor(() => a.lines.some(([m]) => m === 'discovery advertisement refused')), 'logged');
  t.same(a.d.list(), [], 'not listed');
  t.match(a.lines.filter(([m]) => m === 'discovery advertisement refused'), [['discovery advertisement refused', { from: '127.0.0.5', reason: 'bad signature' }]], 'one line per address and minute');
});

t.test('a node silent for 3 periods is dropped', async (t) => {
  const port = await freePort('127.0.0.6');
  const a = node(t, { listen: '127.0.0.6', port, members: ['127.0.0.7'] }, 'edge-a');
  const b = node(t, { listen: '127.0.0.7', port, members: ['127.0.0.6'] }, 'edge-b');
  await a.d.start();
  await b.d.start();
  t.ok(await waitFor(() => a.d.list().length === 1), 'heard');
  b.d.stop();
  a.clock.now += 2900;
  t.equal(a.d.list().length, 1, 'still listed within 3 periods');
  a.clock.now += 3000;
  t.same(a.d.list(), [], 'dropped after 3 silent periods');
});

t.test('with members null the advertisement is broadcast: a receiver bound to the loopback broadcast address hears it', async (t) => {
  const port = await freePort('127.0.0.8');
  const sender = node(t, { listen: '127.0.0.8', port }, 'edge-a', () => ['127.255.255.255']);
  const receiver = node(t, { listen: '127.255.255.255', port, members: [] }, 'edge-b');
  await receiver.d.start();
  await sender.d.start();
  t.same(sender.d.targets(), [{ ip: '127.255.255.255', port }]);
  t.ok(await waitFor(() => receiver.d.list().length === 1), 'heard by broadcast');
  t.match(receiver.d.list(), [{ address: '127.0.0.8', advertisement: { name: 'edge-a' } }]);
});
