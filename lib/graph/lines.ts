// What a graph line is made of. Every second the history takes one sample per scope (the node,
// each virtual host): the realtime `Host` document (its System members, or one VirtualHost[]
// entry) and the raw 1-second counter row of that scope. A line reads either; a member the
// document does not carry gives no sample (a gap), never a made-up zero.
import { cacheResultIndex, fieldIndex, type CounterField } from '../record/counter-layout.js';
import type { CacheResult } from '../cache/policy/results.js';

export interface Sample {
  /** The Host document (global graphs) or one VirtualHost[] entry (virtual-host graphs). */
  doc: Record<string, unknown>;
  /** The scope's counters of the last closed second (lib/stats/aggregate.ts Series.second). */
  row: Float64Array;
}

/**
 * `sum`: a rate or a level; the sum of all hosts adds the hosts' values and a step is the mean
 * of its seconds. `mean`: a ratio or a mean time, `value` its numerator and `weight` its
 * denominator per second; hosts and seconds add both, so a step is the true weighted mean.
 */
export interface LineDef {
  label: string;
  value(s: Sample): number | undefined;
  weight?(s: Sample): number;
}

export type Unit = '%' | 'B' | 'B/s' | '/s' | 'ms' | 'sockets' | 'sessions' | 'files' | 'load';

export interface ResourceDef {
  name: string;
  title: string;
  unit: Unit;
  /** Main first, then Sub, then the further lines of the detail graphs. */
  lines: LineDef[];
}

/** A number member at a dotted path of the document (`System.CPU.Kernel`), else undefined. */
export function member(doc: Record<string, unknown>, path: string): number | undefined {
  let v: unknown = doc;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A line of one document member, scaled (0.01 % to %, 0.01 ms to ms). */
export function fromDoc(label: string, path: string, scale = 1): LineDef {
  return { label, value: (s) => { const v = member(s.doc, path); return v === undefined ? undefined : v * scale; } };
}

/** Reads the sum of counter fields of a row. */
export function fields(...names: CounterField[]): (row: Float64Array) => number {
  const at = names.map(fieldIndex);
  return (row) => { let n = 0; for (const i of at) n += row[i]!; return n; };
}

/** Reads the sum of cache-result counts of a row. */
export function results(...names: CacheResult[]): (row: Float64Array) => number {
  const at = names.map(cacheResultIndex);
  return (row) => { let n = 0; for (const i of at) n += row[i]!; return n; };
}

/** A per-second count or byte size from the counters. */
export function rate(label: string, read: (row: Float64Array) => number): LineDef {
  return { label, value: (s) => read(s.row) };
}

/** A weighted mean from the counters: numerator / denominator, each summed over hosts and seconds. */
export function mean(label: string, numerator: (row: Float64Array) => number, denominator: (row: Float64Array) => number): LineDef {
  return { label, value: (s) => numerator(s.row), weight: (s) => denominator(s.row) };
}
