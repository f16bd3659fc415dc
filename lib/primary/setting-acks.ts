// The confirmations of one setting delivery: each worker it went to answers `ready` (or a
// refusal) for its generation; the delivery settles when all did, one refused, a worker left
// (it is not waited for), or the bound passed.
import type { Worker } from 'node:cluster';

const BOUND_MS = 30_000;

export class SettingAcks {
  private readonly pending = new Map<number, { waiting: Set<Worker>; resolve(): void; reject(e: Error): void }>();

  /** Resolves when every worker confirmed `generation`; rejects on a refusal or after 30 s. */
  wait(generation: number, workers: Worker[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { this.pending.delete(generation); reject(new Error('workers did not confirm the setting within 30 s')); }, BOUND_MS);
      this.pending.set(generation, {
        waiting: new Set(workers),
        resolve: () => { clearTimeout(timer); this.pending.delete(generation); resolve(); },
        reject: (e) => { clearTimeout(timer); this.pending.delete(generation); reject(e); },
      });
    });
  }

  ack(generation: number, worker: Worker): void {
    const a = this.pending.get(generation);
    if (a === undefined) return;
    a.waiting.delete(worker);
    if (a.waiting.size === 0) a.resolve();
  }

  refuse(generation: number, reason: string): void {
    this.pending.get(generation)?.reject(new Error(reason));
  }

  /** A worker that exited answers nothing: no delivery waits for it. */
  gone(worker: Worker): void {
    for (const generation of [...this.pending.keys()]) this.ack(generation, worker);
  }
}
