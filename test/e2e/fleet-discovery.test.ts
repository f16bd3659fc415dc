// Black-box: discovery between real nodes, each with its discovery socket on its own loopback
// address (127.0.0.2, 127.0.0.3) and the other as unicast member. /get/discover lists the other
// node with the advertised fields, never the node itself; a stranger's forged advertisement is
// dropped and logged; a node that stops is dropped after 3 silent periods.
import dgram from 'node:dgram';
import t from 'tap';
import { discoveryNode } from './fixtures/fleet.js';
import { freePort } from '../helpers/ports.js';
import { type RunningServer } from '../helpers/server.js';
import { pollUntil, waitFor } from '../helpers/wait.js';
import { call, infoLog } from '../lifecycle/fixtures/node.js';

const port = await freePort('127.0.0.2');
const SECRET = 'fleet-secret';

const node = (address: string, members: string[]): Promise<RunningServer> => discoveryNode(t, { port, secret: SECRET }, address, members);

type Entry = { address: string; lastSeen: number; advertisement: Record<string, string> };
const discovered = async (s: RunningServer): Promise<Entry[]> => {
  const r = await call(s.apiPort, '/get/discover');
  return (r.json as { result: Entry[] }).result;
};

const a = await node('127.0.0.2', ['127.0.0.3', '127.0.0.2']);
const b = await node('127.0.0.3', ['127.0.0.2']);

t.test('each node lists the other with its address, lastSeen and signed advertisement, and never itself', async (t) => {
  const seenByA = await pollUntil(() => discovered(a), (l) => l.length > 0, { timeoutMs: 15_000, intervalMs: 100 });
  const seenByB = await pollUntil(() => discovered(b), (l) => l.length > 0, { timeoutMs: 15_000, intervalMs: 100 });
  t.match(seenByA, [{ address: '127.0.0.3', lastSeen: Number, advertisement: { signature: /^[0-9a-f]{64}$/, name: String, version: '0.1.0', buildNumber: '0', settingHash: /^[0-9a-f]{64}$/ } }]);
  t.equal(seenByA.length, 1, 'a does not list itself although it is among its members');
  t.match(seenByB, [{ address: '127.0.0.2' }]);
  t.ok(Math.abs(seenByA[0]!.lastSeen - Date.now()) < 60_000, 'lastSeen is epoch milliseconds');
  t.not(seenByA[0]!.advertisement.settingHash, seenByB[0]!.advertisement.settingHash, 'the setting hash is each node\'s own');
});

t.test('a forged advertisement is dropped and logged', async (t) => {
  const stranger = dgram.createSocket('udp4');
  t.teardown(() => stranger.close());
  await new Promise<void>((r) => stranger.bind(0, '127.0.0.9', () => r()));
  const forged = JSON.stringify({ tag: 'svc-discover/2', name: 'intruder', version: '0.1.0', buildNumber: '0', settingHash: 'x', address: '127.0.0.9', seq: 1, time: Date.now(), signature: 'ab'.repeat(32) });
  await new Promise<void>((r) => stranger.send(forged, port, '127.0.0.2', () => r()));
  t.ok(await waitFor(async () => /discovery advertisement refused.*127\.0\.0\.9.*bad signature/.test(await infoLog(a)), { timeoutMs: 10_000 }), 'logged');
  t.notOk((await discovered(a)).some((e) => e.address === '127.0.0.9'), 'not listed');
});

t.test('a node that stops is dropped after 3 silent periods', async (t) => {
  await b.stop();
  const after = await pollUntil(() => discovered(a), (l) => l.length === 0, { timeoutMs: 15_000, intervalMs: 200 });
  t.same(after, []);
});
