// The primary's sums of the workers' counter deltas (lib/ipc/messages.ts StatsDeltasMessage):
// per virtual host and for the node. Every second (tick) the deltas received during it become
// that second's values; they are added to the cumulative totals (/metrics counters) and to the
// 1-minute and 5-minute windows (averages, 5-minute sums). Workers send deltas, so a worker that
// restarts, counting from zero, adds only what it counted since: totals never go backwards or
// double. What a crashed worker counted in its last second is lost (a drained one sends it).
import { STRIDE } from '../pipeline/counters.js';
import type { StatsDeltasMessage } from '../ipc/messages.js';
import { SlidingWindow } from './windows.js';

/** The figures of one host, or of the node. */
export class Series {
  /** Counted since the primary started (or the host first appeared). */
  readonly total = new Float64Array(STRIDE);
  /** The last closed second. */
  readonly second = new Float64Array(STRIDE);
  /** Received during the current second. */
  readonly pending = new Float64Array(STRIDE);
  readonly min1 = new SlidingWindow(STRIDE, 60, 1);
  readonly min5 = new SlidingWindow(STRIDE, 30, 10);

  constructor(readonly since: number) {}

  addRow(values: ArrayLike<number>, at: number): void {
    const p = this.pending;
    for (let i = 0; i < STRIDE; i++) p[i] += values[at + i]!;
  }

  close(): void {
    this.second.set(this.pending);
    this.pending.fill(0);
    for (let i = 0; i < STRIDE; i++) this.total[i] += this.second[i]!;
    this.min1.tick();
    this.min5.tick();
    this.min1.add(this.second);
    this.min5.add(this.second);
  }
}

export class StatsAggregator {
  readonly node: Series;
  private readonly hosts = new Map<string, Series>();
  readonly startedAt: number;

  /** `now`: wall-clock ms (injected by tests). */
  constructor(private readonly now: () => number = Date.now) {
    this.startedAt = now();
    this.node = new Series(this.startedAt);
  }

  /** One worker's deltas. A layout that is not ours (a worker of another build) is ignored. */
  onDeltas(m: StatsDeltasMessage): void {
    if (m.stride !== STRIDE || m.values.length !== m.hosts.length * STRIDE) return;
    for (let r = 0; r < m.hosts.length; r++) {
      const at = r * STRIDE;
      this.node.addRow(m.values, at);
      // Row 0 (no virtual host took the transaction) counts for the node only.
      if (r > 0) this.series(m.hosts[r]!).addRow(m.values, at);
    }
  }

  /** A second went by: what arrived during it becomes the 1-second values. */
  tick(): void {
    this.node.close();
    for (const s of this.hosts.values()) s.close();
  }

  /** The figures of a host (created empty when the host has counted nothing yet). */
  series(name: string): Series {
    let s = this.hosts.get(name);
    if (s === undefined) {
      s = new Series(this.now());
      this.hosts.set(name, s);
    }
    return s;
  }

  /** Forgets hosts no longer served (their past stays in the node's figures). */
  retain(names: Iterable<string>): void {
    const keep = new Set(names);
    for (const n of [...this.hosts.keys()]) if (!keep.has(n)) this.hosts.delete(n);
    for (const n of keep) this.series(n);
  }
}
