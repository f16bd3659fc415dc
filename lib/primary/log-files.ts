// The primary's half of the workers' direct log writes (lib/log/direct.ts): it announces the
// current file of every host log route to each worker, and a roll waits until the workers
// answered that they stopped writing the previous file, so that no line is appended to a file
// after it was gzipped. A worker that does not answer in time (stuck, or exiting) is not waited
// for beyond SWITCH_WAIT_MS.
import type { Worker } from 'node:cluster';
import type { LogFiles } from '../log/direct.js';
import type { PrimaryMessage } from '../ipc/messages.js';

const SWITCH_WAIT_MS = 2000;

export class LogFileAnnouncer {
  private generation = 0;
  private files: LogFiles = {};
  /** Per worker: the newest generation it answered. */
  private readonly answered = new WeakMap<Worker, number>();
  private waiters: Array<() => void> = [];

  constructor(private readonly workers: () => Worker[], private readonly send: (w: Worker, m: PrimaryMessage) => void) {}

  /** Tells every worker the current files; resolves once each answered (or the wait ran out). */
  announce(files: LogFiles): Promise<void> {
    this.files = files;
    const generation = ++this.generation;
    const workers = this.workers();
    for (const w of workers) this.send(w, { type: 'log-files', generation, files });
    return new Promise<void>((resolve) => {
      const pending = (): boolean => workers.some((w) => w.isConnected() && (this.answered.get(w) ?? 0) < generation);
      if (!pending()) { resolve(); return; }
      const waiter = (): void => {
        if (pending()) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((x) => x !== waiter);
        resolve();
      };
      const timer = setTimeout(() => { this.waiters = this.waiters.filter((x) => x !== waiter); resolve(); }, SWITCH_WAIT_MS);
      this.waiters.push(waiter);
    });
  }

  /** A worker that starts (its hello) gets the files of now. */
  greet(w: Worker): void {
    this.send(w, { type: 'log-files', generation: this.generation, files: this.files });
  }

  /** A worker moved to the files of `generation` (or exited: `generation` Infinity). */
  switched(w: Worker, generation: number): void {
    this.answered.set(w, Math.max(generation, this.answered.get(w) ?? 0));
    for (const waiter of [...this.waiters]) waiter();
  }
}
