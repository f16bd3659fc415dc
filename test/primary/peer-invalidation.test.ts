// The primary's side of an invalidation's fan-out (lib/primary/peer-invalidation.ts): it waits
// for every worker's acknowledgement, except the worker that asked, one that disconnects, and
// one still silent past the bound.
import t from 'tap';
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { RpcClient } from '../../lib/ipc/rpc.js';
import type { RpcRequest } from '../../lib/ipc/messages.js';
import { dropMemoryEverywhere } from '../../lib/primary/peer-invalidation.js';

/** A worker process as the primary sees it; it acknowledges when told to. */
class FakeWorker extends EventEmitter {
  readonly asked: RpcRequest[] = [];
  private unanswered: RpcRequest[] = [];
  private connected = true;
  readonly process = { pid: 4000 };
  constructor(private readonly rpc: RpcClient, private readonly answersAtOnce: boolean) { super(); }
  isConnected(): boolean { return this.connected; }
  send(m: RpcRequest): boolean {
    this.asked.push(m);
    this.unanswered.push(m);
    if (this.answersAtOnce) this.ack();
    return true;
  }
  ack(): void {
    for (const m of this.unanswered.splice(0)) setImmediate(() => this.rpc.onMessage({ type: 'rpc-result', id: m.id, ok: true, result: null }));
  }
  exit(): void { this.connected = false; this.emit('disconnect'); }
}

const items = [{ vhost: 'a.test', url: '/doc', prefix: false }];
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

function setup(...answersAtOnce: boolean[]) {
  const rpc = new RpcClient();
  const workers = answersAtOnce.map((a) => new FakeWorker(rpc, a));
  return { rpc, workers, list: () => workers as unknown as Worker[] };
}

t.test('the fan-out resolves only once every worker acknowledged dropping its memory copies', async (t) => {
  const { rpc, workers, list } = setup(true, false);
  let done = false;
  const fanOut = dropMemoryEverywhere(rpc, list, items).then(() => { done = true; });
  for (let i = 0; i < 5; i++) await turn();
  t.equal(done, false, 'one worker has not acknowledged yet');
  t.match(workers[1]!.asked, [{ op: 'drop-memory', args: { items } }]);
  workers[1]!.ack();
  await fanOut;
  t.equal(done, true);
});

t.test('the worker that made the invalidation is not asked again', async (t) => {
  const { rpc, workers, list } = setup(true, false);
  await dropMemoryEverywhere(rpc, list, items, workers[1] as unknown as Worker);
  t.equal(workers[0]!.asked.length, 1, 'the other worker was asked');
  t.equal(workers[1]!.asked.length, 0, 'the one that asked was not');
});

t.test('a worker that exits before acknowledging is not waited for', async (t) => {
  const { rpc, workers, list } = setup(true, false);
  const fanOut = dropMemoryEverywhere(rpc, list, items);
  await turn();
  workers[1]!.exit();
  await fanOut;
  t.pass('resolved without the exited worker');
});

t.test('a worker silent past the bound is given up on', async (t) => {
  const { rpc, list } = setup(false);
  const started = Date.now();
  await dropMemoryEverywhere(rpc, list, items, undefined, 50);
  t.ok(Date.now() - started >= 45, 'it waited for the bound');
});
