// Scales and tick labels of a graph: a value axis with round steps (1, 2, 2.5, 5 x 10^k) and
// unit prefixes, and a time axis with ticks on round local times for each graph type.
import type { Unit } from './lines.js';
import type { GraphTypeName } from './types.js';

export interface ValueAxis {
  lo: number;
  hi: number;
  ticks: number[];
}

/**
 * A value axis holding [min, max] (and 0) in about `count` round steps: 1, 2, 2.5, 5 x 10^k, or
 * for byte sizes (`binary`) 1, 2, 5, 10 ... 500 x 1024^k, so ticks read 1 GiB, not 954 MiB.
 */
export function valueAxis(min: number, max: number, count = 5, binary = false): ValueAxis {
  let lo = Math.min(0, Number.isFinite(min) ? min : 0);
  let hi = Math.max(0, Number.isFinite(max) ? max : 0);
  if (hi - lo <= 0) hi = lo + 1;
  const raw = (hi - lo) / count;
  let step: number;
  if (binary && raw >= 1) {
    const unit = 1024 ** Math.floor(Math.log(raw) / Math.log(1024));
    step = ([1, 2, 5, 10, 20, 50, 100, 200, 500, 1024].find((m) => m * unit >= raw - 1e-9) ?? 1024) * unit;
  } else {
    const mag = 10 ** Math.floor(Math.log10(raw));
    step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw - 1e-12) ?? 10) * mag;
  }
  lo = Math.floor(lo / step + 1e-9) * step;
  hi = Math.ceil(hi / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Math.abs(v) < step / 1e6 ? 0 : v);
  return { lo, hi, ticks };
}

const SI = ['', 'k', 'M', 'G', 'T', 'P'];
const BINARY = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];

function scaled(v: number, base: number, names: string[]): { n: string; prefix: string } {
  let i = 0;
  let x = Math.abs(v);
  while (x >= base && i < names.length - 1) { x /= base; i++; }
  const digits = x >= 100 || Number.isInteger(x) ? 0 : x >= 10 ? 1 : 2;
  const fixed = (v < 0 ? -x : x).toFixed(digits);
  const n = fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
  return { n, prefix: names[i]! };
}

/**
 * A value with its unit, short enough for a tick label: `1.5 MB/s`, `25%`, `3.2k/s`. `compact`
 * (the dash graph, whose axis caption carries the unit): only the number and its prefix.
 */
export function formatValue(v: number, unit: Unit, compact = false): string {
  if (compact && unit !== '%' && unit !== 'ms') {
    const s = scaled(v, unit === 'B' ? 1024 : 1000, unit === 'B' ? BINARY : SI);
    return `${s.n}${s.prefix}`;
  }
  switch (unit) {
    case '%': return `${scaled(v, 1e9, SI).n}%`;
    case 'B': { const s = scaled(v, 1024, BINARY); return `${s.n} ${s.prefix}B`; }
    case 'B/s': { const s = scaled(v, 1000, SI); return `${s.n} ${s.prefix}B/s`; }
    case '/s': { const s = scaled(v, 1000, SI); return `${s.n}${s.prefix}/s`; }
    case 'ms': return v >= 1000 ? `${scaled(v / 1000, 1e9, SI).n} s` : `${scaled(v, 1e9, SI).n} ms`;
    default: { const s = scaled(v, 1000, SI); return `${s.n}${s.prefix}`; }
  }
}

/** The axis caption: what the numbers count. */
export const UNIT_CAPTION: Readonly<Record<Unit, string>> = {
  '%': 'percent', B: 'bytes', 'B/s': 'bytes per second', '/s': 'per second', ms: 'milliseconds',
  sockets: 'sockets', sessions: 'sessions', files: 'files', load: 'load',
};

export interface TimeTick {
  /** Seconds since the epoch. */
  t: number;
  /** Empty for a tick without a label. */
  label: string;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');
const dayLabel = (d: Date): string => `${MONTHS[d.getMonth()]} ${d.getDate()}`;

/** Ticks of the time axis over [from, to) seconds, in the server's local time. */
export function timeTicks(type: GraphTypeName, from: number, to: number): TimeTick[] {
  const out: TimeTick[] = [];
  const d = new Date(from * 1000);
  if (type === 'dash' || type === 'day') {
    const every = type === 'dash' ? 3 : 6;
    d.setMinutes(0, 0, 0);
    for (; d.getTime() / 1000 < to; d.setHours(d.getHours() + 1)) {
      const t = d.getTime() / 1000;
      if (t < from || d.getHours() % every !== 0) continue;
      out.push({ t, label: d.getHours() === 0 && type === 'day' ? dayLabel(d) : `${pad(d.getHours())}:00` });
    }
    return out;
  }
  if (type === 'week' || type === 'month') {
    d.setHours(0, 0, 0, 0);
    for (; d.getTime() / 1000 < to; d.setDate(d.getDate() + 1)) {
      const t = d.getTime() / 1000;
      if (t < from) continue;
      // week: a tick a day, a label every other day; month: ticks and labels on Mondays.
      if (type === 'week') out.push({ t, label: d.getDate() % 2 === 0 ? dayLabel(d) : '' });
      else if (d.getDay() === 1) out.push({ t, label: dayLabel(d) });
    }
    return out;
  }
  d.setDate(1);
  d.setHours(0, 0, 0, 0);
  for (; d.getTime() / 1000 < to; d.setMonth(d.getMonth() + 1)) {
    const t = d.getTime() / 1000;
    if (t < from) continue;
    out.push({ t, label: d.getMonth() % 2 === 0 ? `${MONTHS[d.getMonth()]} ${String(d.getFullYear()).slice(2)}` : '' });
  }
  return out;
}
