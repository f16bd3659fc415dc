// The worker slot's state machine (lib/primary/worker-life.ts) and the slots driven by it
// (lib/primary/worker-slots.ts), in-process with stand-in workers: what a worker is sent and
// which workers serve is what the cluster tests see through real processes, here without them.
import t from 'tap';
import type { Worker } from 'node:cluster';
import type { PrimaryMessage } from '../../lib/ipc/messages.js';
import { WorkerLife, type WorkerPhase } from '../../lib/primary/worker-life.js';
import { WorkerSlots, type Slot } from '../../lib/primary/worker-slots.js';

const PHASES: WorkerPhase[] = ['starting', 'ready', 'draining', 'dead'];
/** Written out again here, so that a change of the module's table shows as a failure. */
const ALLOWED = new Set(['starting>ready', 'starting>dead', 'ready>draining', 'ready>dead', 'draining>dead']);
/** The way to reach each state from a new worker. */
const PATH: Record<WorkerPhase, WorkerPhase[]> = { starting: [], ready: ['ready'], draining: ['ready', 'draining'], dead: ['dead'] };

let nextPid = 1000;
function fakeWorker(): Worker {
  const pid = nextPid++;
  return { id: pid, process: { pid }, isConnected: () => true } as unknown as Worker;
}

t.test('a worker moves only along the table of transitions; any other move is reported and changes nothing', async (t) => {
  for (const from of PHASES) {
    for (const to of PHASES) {
      const reported: unknown[] = [];
      const life = new WorkerLife(fakeWorker(), 3, (d) => reported.push(d));
      for (const step of PATH[from]) t.ok(life.to(step), `${step} on the way to ${from}`);
      const moved = life.to(to);
      if (ALLOWED.has(`${from}>${to}`)) {
        t.ok(moved, `${from} -> ${to} is taken`);
        t.equal(life.phase, to);
        t.same(reported, []);
      } else {
        t.notOk(moved, `${from} -> ${to} is refused`);
        t.equal(life.phase, from, 'the state stays');
        t.match(reported, [{ slot: 3, from, to }], 'and the refusal is reported');
      }
    }
  }
});

/** Slots whose `spawn` starts a stand-in worker that is ready at once. */
function harness() {
  const sent: Array<{ pid: number | undefined; m: PrimaryMessage }> = [];
  const spawned: Worker[] = [];
  /** The slot each spawn was for, by pid. */
  const slotOf = new Map<number | undefined, Slot>();
  const illegal: unknown[] = [];
  const slots: WorkerSlots = new WorkerSlots({
    spawn: async (slot: Slot) => {
      const w = fakeWorker();
      spawned.push(w);
      slotOf.set(w.process.pid, slot);
      slots.forked(slot, w);
      slots.becameReady(slot, w);
      return w;
    },
    send: (w, m) => sent.push({ pid: w.process.pid, m }),
    drainTimeoutMs: () => 5000,
    stopping: () => false,
    illegal: (d) => illegal.push(d),
  });
  return { slots, sent, spawned, illegal, slotOf };
}

t.test('a rolling restart drains the replaced worker, which follows the ring until it exits, and its exit starts nobody', async (t) => {
  const h = harness();
  const slots = h.slots;
  await slots.start(1);
  const [first] = h.spawned;
  t.same(slots.live(), [first], 'the first worker serves');
  await slots.roll();
  const second = h.spawned[1]!;
  t.same(slots.live(), [second], 'its replacement serves, the old one no longer counts as live');
  t.same(slots.roles(), [{ role: 'worker-0', pid: second.process.pid }], 'the serving process is the one the metrics name');
  t.match(h.sent.filter((s) => s.m.type === 'drain'), [{ pid: first!.process.pid, m: { type: 'drain', timeoutMs: 5000 } }], 'only the old worker is told to drain');
  h.sent.length = 0;
  slots.broadcastRing();
  t.same(h.sent.map((s) => s.pid).sort(), [first!.process.pid, second.process.pid].sort(), 'the ring reaches the serving and the draining worker');
  slots.exited(h.slotOf.get(first!.process.pid)!, first!, 0, null);
  t.equal(h.spawned.length, 2, 'a drained worker that exits is not replaced');
  t.same(h.illegal, [], 'no transition was refused');
});

t.test('a serving worker that dies is replaced; a second ready from it is refused and reported', async (t) => {
  const h = harness();
  await h.slots.start(1);
  const first = h.spawned[0]!;
  const slot = h.slotOf.get(first.process.pid)!;
  h.slots.becameReady(slot, first);
  t.match(h.illegal, [{ slot: 0, from: 'ready', to: 'ready' }], 'ready twice is a bug, reported');
  t.same(h.slots.live(), [first], 'and changes nothing');
  h.slots.exited(slot, first, 1, null);
  t.same(h.slots.live(), [], 'the dead worker no longer serves');
  // The replacement is started on a timer (no back-off after one death): wait for it, bounded.
  for (let i = 0; i < 200 && h.slots.live().length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(h.spawned.length, 2, 'a replacement was started');
  t.same(h.slots.live(), [h.spawned[1]], 'and serves');
});
