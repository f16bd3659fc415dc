// The primary's sums of the workers' counter deltas (lib/ipc/messages.ts StatsDeltasMessage):
// per virtual host and for the node. Every second (tick) the deltas received during it become
// that second's values; they are added to the cumulative totals (/metrics counters) and to the
// 1-minute and 5-minute windows (averages, 5-minute sums). Workers send deltas, so a worker that
// restarts, counting from zero, adds only what it counted since: totals never go backwards or
// double. What a crashed worker counted in its last second is lost (a drained one sends it).
import { DIRECTORY_SEPARATOR, HOST_GAUGE_STRIDE, STRIDE } from '../record/counter-layout.js';
import type { StatsDeltasMessage, WorkerGauges } from '../ipc/messages.js';
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

/** The node's gauges: the sums of the live workers' latest ones (EQ: the largest lag). */
export interface NodeGauges extends Omit<WorkerGauges, 'disks'> {
  /** The host gauges summed over every row (HOST_GAUGES order). */
  all: Float64Array;
  /** Per disk, the statuses the workers see. */
  disks: string[][];
}

export class StatsAggregator {
  readonly node: Series;
  private readonly hosts = new Map<string, Series>();
  /** The latest message of each live worker (its gauges replace the previous ones). */
  private readonly latest = new Map<number, StatsDeltasMessage>();
  readonly startedAt: number;

  /** `now`: wall-clock ms (injected by tests). */
  constructor(private readonly now: () => number = Date.now) {
    this.startedAt = now();
    this.node = new Series(this.startedAt);
  }

  /**
   * One worker's deltas and gauges; `from` names the worker (its gauges count until it is gone).
   * A layout that is not ours (a worker of another build) is ignored.
   */
  onDeltas(m: StatsDeltasMessage, from = 0): void {
    if (m.stride !== STRIDE || m.values.length !== m.hosts.length * STRIDE) return;
    if (m.gaugeStride === HOST_GAUGE_STRIDE && m.gauges.length === m.hosts.length * HOST_GAUGE_STRIDE) this.latest.set(from, m);
    for (let r = 0; r < m.hosts.length; r++) {
      const at = r * STRIDE;
      const name = m.hosts[r]!;
      // A directory row counts again what its host's row counted: not for the node.
      if (!name.includes(DIRECTORY_SEPARATOR)) this.node.addRow(m.values, at);
      // Row 0 (no virtual host took the transaction) counts for the node only.
      if (r > 0) this.series(name).addRow(m.values, at);
    }
  }

  /** A worker exited: its connections and work in progress are gone with it. */
  workerGone(from: number): void {
    this.latest.delete(from);
  }

  /** A host's gauges summed over the live workers (HOST_GAUGES order). */
  hostGauges(name: string): Float64Array {
    const out = new Float64Array(HOST_GAUGE_STRIDE);
    for (const m of this.latest.values()) {
      const r = m.hosts.indexOf(name);
      if (r < 0) continue;
      for (let g = 0; g < HOST_GAUGE_STRIDE; g++) out[g] += m.gauges[r * HOST_GAUGE_STRIDE + g]!;
    }
    return out;
  }

  nodeGauges(): NodeGauges {
    const out: NodeGauges = { all: new Float64Array(HOST_GAUGE_STRIDE), serverSockets: 0, serverBusy: 0, eventLoopLag: 0, waitingWrites: 0, disks: [] };
    for (const m of this.latest.values()) {
      for (let i = 0; i < m.gauges.length; i++) out.all[i % HOST_GAUGE_STRIDE] += m.gauges[i]!;
      out.serverSockets += m.node.serverSockets;
      out.serverBusy += m.node.serverBusy;
      out.eventLoopLag = Math.max(out.eventLoopLag, m.node.eventLoopLag);
      out.waitingWrites += m.node.waitingWrites;
      m.node.disks.forEach((st, i) => (out.disks[i] ??= []).push(st));
    }
    return out;
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

  /** The statistics directories a host has figures for, sorted. */
  directories(host: string): string[] {
    const prefix = `${host}${DIRECTORY_SEPARATOR}`;
    const out: string[] = [];
    for (const n of this.hosts.keys()) if (n.startsWith(prefix)) out.push(n.slice(prefix.length));
    return out.sort();
  }

  /** A statistics directory's figures (created empty when it has counted nothing yet). */
  directory(host: string, dir: string): Series {
    return this.series(`${host}${DIRECTORY_SEPARATOR}${dir}`);
  }

  /** Forgets hosts no longer served and their directories (their past stays in the node's figures). */
  retain(names: Iterable<string>): void {
    const keep = new Set(names);
    const hostOf = (n: string): string => n.split(DIRECTORY_SEPARATOR, 1)[0]!;
    for (const n of [...this.hosts.keys()]) if (!keep.has(hostOf(n))) this.hosts.delete(n);
    for (const n of keep) this.series(n);
  }
}
