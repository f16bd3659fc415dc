// The worker's side of an invalidation's fan-out: it asks the primary to have every other worker
// do its part (lib/primary/peer-invalidation.ts) and waits for the answer before its client gets
// one.
import type { Invalidation } from '../cache/commands/invalidate.js';
import type { Target } from '../cache/commands/targets.js';
import type { PrimaryMessage, WorkerMessage } from '../ipc/messages.js';
import { toWire } from '../ipc/wire.js';
import type { Peers } from '../pipeline/parts/context.js';
import type { PurgeCall } from '../ipc/messages.js';

/** Past the primary's own bounds (5 s, 30 s): a primary that is gone must not hold a client for ever. */
const ANSWER_BOUND_MS = 35_000;

export class PrimaryLink implements Peers {
  private nextId = 1;
  private readonly waiting = new Map<number, () => void>();

  constructor(private readonly send: (m: WorkerMessage) => void) {}

  invalidated(items: Invalidation[]): Promise<void> {
    return this.ask((id) => ({ type: 'invalidated', id, items }));
  }

  settle(targets: Target[]): Promise<void> {
    return this.ask((id) => ({ type: 'settle-all', id, targets: targets.map(toWire) }));
  }

  purgeRecognized(call: PurgeCall): void {
    if (process.connected) this.send({ type: 'purge-recognized', ...call });
  }

  /** Feed every message of the primary here. */
  onMessage(m: PrimaryMessage): void {
    if (m.type === 'done') this.waiting.get(m.id)?.();
  }

  private ask(message: (id: number) => WorkerMessage): Promise<void> {
    // A worker without a primary (none to reach) has no peers either.
    if (!process.connected) return Promise.resolve();
    const id = this.nextId++;
    return new Promise((resolve) => {
      const done = (): void => { clearTimeout(timer); this.waiting.delete(id); resolve(); };
      const timer = setTimeout(done, ANSWER_BOUND_MS);
      this.waiting.set(id, done);
      this.send(message(id));
    });
  }
}
