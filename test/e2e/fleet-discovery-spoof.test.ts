// Black-box: discovery under spoofed and flooded datagrams, two real nodes with their discovery
// sockets on 127.0.0.2 and 127.0.0.3 (each the other's member; node a also sends to a recorder
// socket of the test on 127.0.0.20). Datagrams come from sockets the test binds to other
// loopback addresses (127.0.1.x, 127.1.x.y), as a spoofing host would send them. That all of a
// burst was read is known from the legitimate node's next advertisement, read after it on the
// same socket (its lastSeen moves on).
import dgram from 'node:dgram';
import t from 'tap';
import { discoveryNode } from './fixtures/fleet.js';
import { freePort } from '../helpers/ports.js';
import { type RunningServer } from '../helpers/server.js';
import { pollUntil, waitFor, within } from '../helpers/wait.js';
import { call, infoLog } from '../lifecycle/fixtures/node.js';

const port = await freePort('127.0.0.2');
const SECRET = 'fleet-secret';

const node = (address: string, members: string[]): Promise<RunningServer> => discoveryNode(t, { port, secret: SECRET }, address, members);

type Entry = { address: string; lastSeen: number };
const discovered = async (s: RunningServer): Promise<Entry[]> => ((await call(s.apiPort, '/get/discover')).json as { result: Entry[] }).result;

/** Sends `data` to `to` from a socket bound to `from` (port chosen by the OS), then closes it. */
async function sendFrom(from: string, to: string, data: Buffer): Promise<void> {
  const s = dgram.createSocket('udp4');
  try {
    await new Promise<void>((r) => s.bind(0, from, () => r()));
    await new Promise<void>((r, fail) => s.send(data, port, to, (err) => (err ? fail(err) : r())));
  } finally {
    s.close();
  }
}

/** Resolves once `receiver` read an advertisement of `sender` newer than `since`: all sent to it before was read. */
async function heardAfter(receiver: RunningServer, sender: string, since: number): Promise<void> {
  const ok = await waitFor(async () => (await discovered(receiver)).some((e) => e.address === sender && e.lastSeen > since), { timeoutMs: 15_000, intervalMs: 100 });
  if (!ok) throw new Error(`${sender} not heard after ${since}`);
}

const refusedLines = (log: string): string[] => log.split('\n').filter((l) => l.includes('discovery advertisement refused'));

const recorder = dgram.createSocket('udp4');
t.teardown(() => recorder.close());
await new Promise<void>((r) => recorder.bind(port, '127.0.0.20', () => r()));
const a = await node('127.0.0.2', ['127.0.0.3', '127.0.0.20']);
const b = await node('127.0.0.3', ['127.0.0.2']);

t.test('a recorded advertisement replayed from its own address or from 40 others is refused, and the node is listed once', async (t) => {
  await pollUntil(() => discovered(b), (l) => l.length > 0, { timeoutMs: 15_000, intervalMs: 100 });
  const recorded = await within(new Promise<Buffer>((r) => recorder.once('message', (m: Buffer) => r(m))), 10_000, 'an advertisement of a');
  // a sent it to b at the same moment: once b heard a later one, it read this one too.
  await heardAfter(b, '127.0.0.2', Date.now());
  await sendFrom('127.0.0.2', '127.0.0.3', recorded);
  for (let i = 1; i <= 40; i++) await sendFrom(`127.0.1.${i}`, '127.0.0.3', recorded);
  await heardAfter(b, '127.0.0.2', Date.now());
  t.same((await discovered(b)).map((e) => e.address), ['127.0.0.2'], 'only the node that sent it');
  const lines = refusedLines(await infoLog(b));
  t.match(lines.find((l) => l.includes('"from":"127.0.0.2"')), /replay/, 'from its own address: a replay');
  t.match(lines.find((l) => l.includes('"from":"127.0.1.1"')), /signed for 127\.0\.0\.2/, 'from another address: signed for another');
});

t.test('datagrams from 3,000 sources write at most 10 refusal lines a minute, and one line with the count of the others', async (t) => {
  const junk = Buffer.from('not an advertisement');
  for (let i = 0; i < 3000; i++) {
    await sendFrom(`127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`, '127.0.0.2', junk);
  }
  await heardAfter(a, '127.0.0.3', Date.now());
  const lines = refusedLines(await infoLog(a));
  t.ok(lines.length >= 1 && lines.length <= 10, `at most 10 lines (${lines.length})`);
  // The count of the rest is written when the minute ends (test/primary/fleet-discovery.test.ts
  // shows that on the node's timer), and at the latest when the node stops: stopping it here
  // reads the line now instead of waiting out the minute.
  t.equal(await a.stop(), 0, 'node a stops cleanly');
  const summary = (await infoLog(a)).split('\n').find((l) => l.includes('discovery advertisements refused and not logged'));
  t.ok(summary, 'one line with the count');
  const count = Number(/"count":(\d+)/.exec(summary ?? '')?.[1]);
  t.ok(count >= 2000 && count + lines.length <= 3000, `the count of those not logged (${count}; loopback may drop a few)`);
});
