// The primary's side of pre-cache control: a command goes to each worker in slices, the changes
// reach each worker in the order they were made (a drop never overtakes the slices of the
// command it drops), a worker that says hello gets the waiting commands (without the hosts reset
// meanwhile) before its setting, and a worker that left gets nothing more.
import type { Worker } from 'node:cluster';
import t from 'tap';
import { PRECTRL_SLICE, type PrectrlWireEntry } from '../../lib/ipc/messages.js';
import { PrectrlFeed, type FedCommand } from '../../lib/primary/prectrl-feed.js';

interface FakeWorker { connected: boolean; calls: string[]; isConnected(): boolean; process: { pid: number } }
const fakeWorker = (): FakeWorker => ({ connected: true, calls: [], isConnected() { return this.connected; }, process: { pid: 1 } });

/** Each call answers on a later turn of the event loop, as over IPC. */
const rpc = {
  call: (w: Worker, op: string, args: { id?: number; entries?: PrectrlWireEntry[]; vhost?: string }): Promise<never> => {
    (w as unknown as FakeWorker).calls.push(`${op}${args.id === undefined ? '' : ` ${args.id}`}${args.entries === undefined ? '' : ` x${args.entries.length}`}${args.vhost === undefined ? '' : ` ${args.vhost}`}`);
    return new Promise((r) => setImmediate(() => r(null as never)));
  },
};

function command(id: number, hosts: string[], n: number, off: string[] = []): FedCommand {
  const all = Array.from({ length: n }, (_, i): PrectrlWireEntry => {
    const vhost = hosts[i % hosts.length]!;
    return { vhost, kind: 'purge', queuedAt: 1, target: { vhost, prefix: `/${i}`, wildcard: false, text: `/${i}` } };
  });
  return { id, size: n, off: new Set(off), slice: (start) => all.slice(start, start + PRECTRL_SLICE) };
}

t.test('a command goes in slices, in order with the changes after it, to every greeted worker still there', async (t) => {
  const feed = new PrectrlFeed(rpc as never);
  const a = fakeWorker(); const b = fakeWorker(); const gone = fakeWorker();
  for (const w of [a, b, gone]) feed.greet(w as unknown as Worker, () => w.calls.push('setting'));
  gone.connected = false;
  const added = feed.added(command(1, ['a.com'], PRECTRL_SLICE * 2 + 500));
  const dropped = feed.dropped(1);
  await added;
  t.same(a.calls.slice(0, 4), ['setting', `prectrl-add 1 x${PRECTRL_SLICE}`, `prectrl-add 1 x${PRECTRL_SLICE}`, 'prectrl-add 1 x500'], 'the add is whole when its promise resolves');
  await Promise.all([dropped, feed.hostOff('a.com'), feed.cleared()]);
  t.same(a.calls.slice(4), ['prectrl-drop 1', 'prectrl-host-off a.com', 'prectrl-clear']);
  t.same(b.calls, a.calls);
  t.same(gone.calls, ['setting'], 'a worker that left gets nothing');
});

t.test('a worker that says hello gets the waiting commands, without the hosts reset, before its setting', async (t) => {
  const feed = new PrectrlFeed(rpc as never);
  const waiting = [command(3, ['a.com', 'b.com'], 10, ['b.com']), command(4, ['b.com'], 3, ['b.com']), command(5, ['b.com'], 2)];
  feed.watch(() => waiting);
  const w = fakeWorker();
  const set = new Promise<void>((r) => feed.greet(w as unknown as Worker, () => { w.calls.push('setting'); r(); }));
  t.same(w.calls, [], 'the setting waits');
  const later = feed.added(command(6, ['a.com'], 1));
  await Promise.all([set, later]);
  t.same(w.calls, ['prectrl-add 3 x5', 'prectrl-add 5 x2', 'setting', 'prectrl-add 6 x1']);
});
