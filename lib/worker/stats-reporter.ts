// Hands this worker's counters to the primary once a second as deltas (one IPC message; none
// when nothing was counted). The counters themselves are updated by finish with no IPC.
import type { StatsDeltasMessage } from '../ipc/messages.js';
import { workerCounters, type Counters } from '../pipeline/counters.js';

const STATS_INTERVAL_MS = 1000;

export class StatsReporter {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly send: (m: StatsDeltasMessage, done?: () => void) => void, private readonly counters: Counters = workerCounters) {}

  start(): void {
    // unref: a worker that drains must not be kept alive by its statistics timer.
    this.timer = setInterval(() => this.report(), STATS_INTERVAL_MS).unref();
  }

  /** The message of what was counted since the previous one; undefined when nothing was. */
  take(): StatsDeltasMessage | undefined {
    const d = this.counters.takeDeltas();
    let any = false;
    for (let i = 0; i < d.values.length && !any; i++) any = d.values[i] !== 0;
    if (!any) return undefined;
    return { type: 'stats-deltas', stride: d.stride, hosts: d.hosts, values: Array.from(d.values) };
  }

  report(): void {
    const m = this.take();
    if (m !== undefined) this.send(m);
  }

  /** The last deltas before the worker exits (a drain): resolves once they are handed to IPC. */
  flush(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    const m = this.take();
    if (m === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const bound = setTimeout(resolve, 500);
      this.send(m, () => { clearTimeout(bound); resolve(); });
    });
  }
}
