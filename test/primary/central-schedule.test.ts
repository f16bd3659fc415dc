// The schedules of central management on an injected clock: heartbeat cadence, no overlapping
// runs, feedback retries with back-off.
import t from 'tap';
import { CronRunner } from '../../lib/primary/central/clock.js';
import { Heartbeat } from '../../lib/primary/central/heartbeat.js';
import { sendWithRetry } from '../../lib/primary/central/retry.js';
import type { NodeInfo } from '../../lib/primary/central/message.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

const node: NodeInfo = { productVer: '1.2.3', settingVer: 'abc', licenseId: 'L-1', hostname: 'edge-01', iplist: ['10.0.0.1'] };
const start = Date.UTC(2026, 0, 1, 0, 0, 1);

t.test('a heartbeat every 15 seconds sends four {messageVer, node} messages a minute, at the cron times', async (t) => {
  const clock = new ManualClock(start);
  const sent: Record<string, unknown>[] = [];
  const beat = new Heartbeat('*/15 * * * * *', clock, { send: async (m) => { sent.push(m); } }, () => node, () => undefined);
  beat.start();
  await clock.advance(60_000);
  t.equal(sent.length, 4);
  t.same(sent.map((m) => m.timestamp), ['2026-01-01T00:00:15.000Z', '2026-01-01T00:00:30.000Z', '2026-01-01T00:00:45.000Z', '2026-01-01T00:01:00.000Z']);
  t.same(sent[0], { messageVer: '1', timestamp: '2026-01-01T00:00:15.000Z', node });
  beat.stop();
  await clock.advance(60_000);
  t.equal(sent.length, 4, 'nothing after stop');
});

t.test('a heartbeat that cannot be delivered is logged and the next one still goes', async (t) => {
  const clock = new ManualClock(start);
  let calls = 0;
  const logged: string[] = [];
  const beat = new Heartbeat('*/10 * * * * *', clock, { send: async () => { calls++; if (calls === 1) throw new Error('connect ECONNREFUSED'); } }, () => node, (m) => logged.push(m));
  beat.start();
  await clock.advance(20_000);
  t.equal(calls, 2);
  t.same(logged, ['central management: heartbeat not delivered']);
  beat.stop();
});

t.test('a run that lasts past the next fire is not overlapped: the schedule resumes after it', async (t) => {
  const clock = new ManualClock(start);
  let running = 0;
  let most = 0;
  let runs = 0;
  let release: () => void = () => undefined;
  const runner = new CronRunner('* * * * * *', clock, async () => {
    runs++; running++; most = Math.max(most, running);
    await new Promise<void>((r) => { release = r; });
    running--;
  });
  runner.start();
  await clock.advance(5_000);
  t.equal(runs, 1, 'one run while the first has not ended');
  release();
  await settle();
  await clock.advance(1_000);
  t.equal(runs, 2);
  t.equal(most, 1);
  release();
  runner.stop();
});

t.test('a feedback is retried with doubling waits and given up after four attempts', async (t) => {
  const clock = new ManualClock(start);
  const at: number[] = [];
  const logged: Record<string, unknown>[] = [];
  const done = sendWithRetry({ send: async () => { at.push(clock.now() - start); throw new Error('HTTP 503'); } }, {}, {
    clock, log: (_m, f) => logged.push(f), attempts: 4, baseMs: 1000, maxMs: 8000,
  });
  await clock.advance(30_000);
  t.equal(await done, false);
  t.same(at, [0, 1000, 3000, 7000]);
  t.same(logged.map((l) => l.retryInMs), [1000, 2000, 4000, undefined]);
});
