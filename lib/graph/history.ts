// The graph history: every second one sample of each scope is added to the scope's accumulator
// of the current 5-minute step (numerator and denominator per line, lib/graph/lines.ts); when
// the step ends the accumulators go to the round-robin store in one transaction, which
// consolidates them into the coarser archives. Reading a graph merges the stored steps with
// the open one, so the last minutes show at once.
import type { LineDef, Sample } from './lines.js';
import { ALL_HOSTS_SCOPE, layoutFor, NODE_SCOPE, type RrdStore } from './rrd.js';
import type { ResourceDef } from './lines.js';
import { VHOST_LAYOUT, type Layout } from './resources.js';
import { ARCHIVES, type GraphType } from './types.js';

/** One second of the node: the Host document and the counter rows it was built from. */
export interface Second {
  host: Record<string, unknown>;
  nodeRow: Float64Array;
  /** The counter row of a host (by its VirtualHost[].Name). */
  hostRow(name: string): Float64Array;
}

/** The values of one graph: one array per line, the Peaks, and the steps they stand for. */
export interface GraphSeries {
  /** Start of the first step, seconds since the epoch. */
  start: number;
  step: number;
  lines: Float64Array[];
  peak: Float64Array | undefined;
}

const STEP = ARCHIVES[0]!.step;

function addSample(acc: Float64Array, lines: readonly LineDef[], first: number, s: Sample): void {
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const v = l.value(s);
    if (v === undefined) continue;
    const at = 2 * (first + i);
    if (l.weight === undefined) { acc[at] += v; acc[at + 1] += 1; } else { acc[at] += v; acc[at + 1] += l.weight(s); }
  }
}

export class GraphHistory {
  private stepStart: number | undefined;
  private accs = new Map<string, Float64Array>();
  /** Per second: the hosts' values of the `sum` lines, added up for the all-hosts scope. */
  private readonly sums = new Float64Array(VHOST_LAYOUT.lineCount);
  private readonly seen = new Uint8Array(VHOST_LAYOUT.lineCount);

  /** `now`: wall-clock ms (tests inject theirs). */
  constructor(private readonly store: RrdStore, private readonly now: () => number = Date.now) {}

  private acc(scope: string): Float64Array {
    let a = this.accs.get(scope);
    if (a === undefined) {
      a = new Float64Array(layoutFor(scope).width);
      this.accs.set(scope, a);
    }
    return a;
  }

  /** One closed second. A step that ended meanwhile is written first. */
  sample(second: Second): void {
    const step = Math.floor(this.now() / 1000 / STEP) * STEP;
    if (this.stepStart !== step) {
      const ended = this.stepStart;
      this.stepStart = step;
      // Moves on first: a store that cannot be written loses that step, not every later one.
      if (ended !== undefined) this.write(ended, true);
    }
    this.addScope(this.acc(NODE_SCOPE), layoutFor(NODE_SCOPE), { doc: second.host, row: second.nodeRow });
    const all = this.acc(ALL_HOSTS_SCOPE);
    this.sums.fill(0);
    this.seen.fill(0);
    const hosts = Array.isArray(second.host.VirtualHost) ? (second.host.VirtualHost as Record<string, unknown>[]) : [];
    for (const doc of hosts) {
      const name = doc.Name;
      if (typeof name !== 'string') continue;
      const s: Sample = { doc, row: second.hostRow(name) };
      this.addScope(this.acc(name), VHOST_LAYOUT, s);
      this.addToAll(all, s);
    }
    for (let i = 0; i < this.seen.length; i++) {
      if (this.seen[i] === 0) continue;
      all[2 * i] += this.sums[i]!;
      all[2 * i + 1] += 1;
    }
  }

  private addScope(acc: Float64Array, layout: Layout, s: Sample): void {
    for (const r of layout.resources) addSample(acc, r.lines, layout.firstLine.get(r.name)!, s);
  }

  /** Mean lines add a host's numerator and weight; sum lines are summed over the hosts first. */
  private addToAll(all: Float64Array, s: Sample): void {
    let i = 0;
    for (const r of VHOST_LAYOUT.resources) {
      for (const l of r.lines) {
        const v = l.value(s);
        if (v !== undefined) {
          if (l.weight === undefined) { this.sums[i] += v; this.seen[i] = 1; } else { all[2 * i] += v; all[2 * i + 1] += l.weight(s); }
        }
        i++;
      }
    }
  }

  /** Writes a step's accumulators (`closed` false: at shutdown; the next start goes on adding to it). */
  private write(t: number, closed: boolean): void {
    const accs = this.accs;
    this.accs = new Map();
    if (accs.size > 0) this.store.commit(t, accs, closed);
  }

  /** Keeps the hosts served (plus the node and the sum of hosts); the others' history goes. */
  retain(hosts: Iterable<string>): number {
    const keep = new Set([NODE_SCOPE, ALL_HOSTS_SCOPE, ...hosts]);
    for (const s of [...this.accs.keys()]) if (!keep.has(s)) this.accs.delete(s);
    return this.store.retain(keep);
  }

  /** The values of a resource over a graph type's span, ending with the open step. */
  series(scope: string, resource: ResourceDef, type: GraphType): GraphSeries {
    const layout = layoutFor(scope);
    const a = type.archive;
    const n = type.span / a.step;
    const nowS = Math.floor(this.now() / 1000);
    const last = Math.floor(nowS / a.step) * a.step;
    const start = last - (n - 1) * a.step;
    const rows = this.store.rows(scope, a, start, last + a.step);
    // The open 5-minute step is still in memory: it belongs to the last point.
    const open = this.stepStart === undefined ? undefined : this.accs.get(scope);
    const first = layout.firstLine.get(resource.name)!;
    const lines = resource.lines.map(() => new Float64Array(n).fill(NaN));
    const peakAt = 2 * layout.lineCount + layout.resources.indexOf(resource);
    const peak = type.peak ? new Float64Array(n).fill(NaN) : undefined;
    for (let k = 0; k < n; k++) {
      const t = start + k * a.step;
      const row = rows.get(t);
      const withOpen = open !== undefined && Math.floor(this.stepStart! / a.step) * a.step === t;
      for (let i = 0; i < resource.lines.length; i++) {
        const at = 2 * (first + i);
        const num = (row?.[at] ?? 0) + (withOpen ? open[at]! : 0);
        const den = (row?.[at + 1] ?? 0) + (withOpen ? open[at + 1]! : 0);
        if (den > 0) lines[i]![k] = num / den;
      }
      if (peak !== undefined && row !== undefined) peak[k] = row[peakAt]!;
    }
    return { start, step: a.step, lines, peak };
  }

  close(): void {
    if (this.stepStart !== undefined) this.write(this.stepStart, false);
    this.store.close();
  }
}
