// Discovery at socket level, in-process: signed advertisements (HMAC-SHA256, bound to the sender's
// address and a growing sequence), unicast to the members, broadcast (loopback: a receiver bound
// to 127.255.255.255, as broadcast does not cross 127.x addresses otherwise), what is dropped,
// the bound on its log lines, and silence for 3 periods.
import dgram from 'node:dgram';
import t, { type Test } from 'tap';
import { decodeAdvertisement, encodeAdvertisement, MAX_SKEW_MS } from '../../lib/primary/fleet/advertisement.js';
import { REFUSAL_LINES, REFUSAL_WINDOW_MS } from '../../lib/primary/fleet/refusal-log.js';
import { Discovery } from '../../lib/primary/fleet/discovery.js';
import type { Setting } from '../../lib/setting/types.js';
import { freePort } from '../helpers/ports.js';
import { pollUntil, waitFor } from '../helpers/wait.js';

const AD = { name: 'edge-a', version: '1.2.3', buildNumber: '0', settingHash: 'abc' };

t.test('an advertisement signed with the shared secret is read back; a wrong secret, an edit, another source or an old one is refused', async (t) => {
  const now = 1_700_000_000_000;
  const from = '10.0.0.5';
  const data = encodeAdvertisement('k', AD, { address: from, seq: 7, time: now });
  t.match(decodeAdvertisement('k', data, from, now + 1000), { ...AD, address: from, seq: 7, time: now, signature: /^[0-9a-f]{64}$/ });
  t.same(decodeAdvertisement('other', data, from, now), { refused: 'bad signature' });
  const edited = Buffer.from(data.toString().replace('"edge-a"', '"edge-x"'));
  t.same(decodeAdvertisement('k', edited, from, now), { refused: 'bad signature' });
  for (const [field, value] of [['address', '"10.0.0.6"'], ['seq', '8']]) {
    const moved = Buffer.from(data.toString().replace(new RegExp(`"${field}":[^,]+`), `"${field}":${value}`));
    t.same(decodeAdvertisement('k', moved, '10.0.0.6', now), { refused: 'bad signature' }, `the ${field} is signed`);
  }
  t.same(decodeAdvertisement('k', data, '10.0.0.6', now), { refused: 'signed for 10.0.0.5, sent from 10.0.0.6' }, 'replayed from another address');
  t.match(decodeAdvertisement('k', data, from, now + MAX_SKEW_MS + 1), { refused: /more than 300 s away/ });
  t.same(decodeAdvertisement('k', Buffer.from('{"tag":"svc-discover/2","name":"x"}'), from, now), { refused: 'no version' });
  t.same(decodeAdvertisement('k', Buffer.from(JSON.stringify({ tag: 'svc-discover/2', ...AD, address: from, signature: '', seq: 1.5, time: now })), from, now), { refused: 'no seq' });
  t.same(decodeAdvertisement('k', Buffer.from('hello'), from, now), { refused: 'not JSON' });
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

t.test('forged, unsigned and replayed advertisements are dropped; at most 10 lines a minute are logged, then one with the count', async (t) => {
  const port = await freePort('127.0.0.4');
  const a = node(t, { listen: '127.0.0.4', port, members: [] }, 'edge-a');
  await a.d.start();
  const sockets: dgram.Socket[] = [];
  t.teardown(() => { for (const s of sockets) s.close(); });
  const send = async (from: string, data: Buffer): Promise<void> => {
    const s = dgram.createSocket('udp4');
    sockets.push(s);
    await new Promise<void>((r) => s.bind(0, from, () => r()));
    await new Promise<void>((r) => s.send(data, port, '127.0.0.4', () => r()));
  };
  const refused = (): Array<Record<string, unknown>> => a.lines.filter(([m]) => m === 'discovery advertisement refused').map(([, f]) => f);
  const good = (seq: number): Buffer => encodeAdvertisement('fleet-secret', AD, { address: '127.0.0.5', seq, time: a.clock.now });
  await send('127.0.0.5', good(10));
  t.ok(await waitFor(() => a.d.list().length === 1), 'a well-signed one from its own address is heard');
  await send('127.0.0.5', good(10));
  await send('127.0.0.6', good(11));
  await send('127.0.0.5', encodeAdvertisement('guessed-secret', AD, { address: '127.0.0.5', seq: 12, time: a.clock.now }));
  t.ok(await waitFor(() => refused().length === 3));
  t.match(refused(), [
    { from: '127.0.0.5', reason: 'replayed: sequence 10 is not above 10' },
    { from: '127.0.0.6', reason: 'signed for 127.0.0.5, sent from 127.0.0.6' },
    { from: '127.0.0.5', reason: 'bad signature' },
  ]);
  t.same(a.d.list().map((e) => e.address), ['127.0.0.5'], 'listed once');
  // A flood from 30 more sources: the lines stop at 10 for the minute, the rest is counted.
  for (let i = 0; i < 30; i++) await send(`127.0.4.${i + 1}`, Buffer.from('junk'));
  // Read after the flood on the same socket: once it is, so is the flood.
  a.clock.now += 1;
  await send('127.0.0.5', good(13));
  t.ok(await waitFor(() => a.d.list()[0]?.lastSeen === a.clock.now), 'the flood was read');
  t.ok(await waitFor(() => refused().length === REFUSAL_LINES), `${REFUSAL_LINES} lines`);
  t.notOk(a.lines.some(([m]) => m === 'discovery advertisements refused and not logged'), 'no count before the minute ends');
  a.clock.now += REFUSAL_WINDOW_MS;
  await send('127.0.4.99', Buffer.from('junk'));
  t.ok(await waitFor(() => refused().length === REFUSAL_LINES + 1), 'a new minute logs again');
  t.match(a.lines.filter(([m]) => m === 'discovery advertisements refused and not logged'),
    [['discovery advertisements refused and not logged', { count: 23, windowSeconds: 60, lastFrom: '127.0.4.30', lastReason: 'not JSON' }]], 'one line with the count of the others');
});

t.test('when the minute of the refusals ends, the line with the count is written without waiting for another refusal', async (t) => {
  // The window's end is read off the node's clock: the test moves that clock to 300 ms before
  // the end, so the node's own timer (real time) writes the count line soon after.
  const port = await freePort('127.0.0.12');
  const a = node(t, { listen: '127.0.0.12', port, members: [] }, 'edge-a');
  await a.d.start();
  const s = dgram.createSocket('udp4');
  t.teardown(() => s.close());
  await new Promise<void>((r) => s.bind(0, '127.0.0.13', () => r()));
  const refusedCount = (): number => a.lines.filter(([m]) => m === 'discovery advertisement refused').length;
  const junk = (): Promise<void> => new Promise<void>((r) => s.send(Buffer.from('junk'), port, '127.0.0.12', () => r()));
  await junk();
  t.ok(await waitFor(() => refusedCount() === 1), 'the first refusal opens the minute');
  a.clock.now += REFUSAL_WINDOW_MS - 300;
  for (let i = 0; i < REFUSAL_LINES + 2; i++) await junk();
  t.ok(await waitFor(() => refusedCount() === REFUSAL_LINES), `${REFUSAL_LINES} lines, then counted`);
  const counted = await pollUntil(async () => a.lines.filter(([m]) => m === 'discovery advertisements refused and not logged'), (l) => l.length > 0, { timeoutMs: 5_000 });
  t.match(counted, [['discovery advertisements refused and not logged', { count: 3, windowSeconds: 60, lastFrom: '127.0.0.13', lastReason: 'not JSON' }]],
    'one line with the count once the minute is over, with no refusal after it');
  t.equal(refusedCount(), REFUSAL_LINES, 'and no refusal line since');
});

t.test('a node bound to 0.0.0.0 signs each unicast advertisement for the address its route leaves from, and is heard', async (t) => {
  const port = await freePort('127.0.0.11');
  const receiver = node(t, { listen: '127.0.0.11', port, members: [] }, 'edge-b');
  // Its own port: the wildcard address and the receiver's cannot share one.
  const sender = node(t, { listen: '0.0.0.0', port: await freePort('0.0.0.0'), members: [`127.0.0.11:${port}`] }, 'edge-a');
  await receiver.d.start();
  await sender.d.start();
  t.ok(await waitFor(() => receiver.d.list().length === 1), 'heard');
  t.notOk(receiver.lines.some(([m]) => m === 'discovery advertisement refused'), 'not refused');
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
