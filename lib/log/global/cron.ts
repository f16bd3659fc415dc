// Cron schedules of env.log.metrics.schedule: six fields (second minute hour day-of-month month
// day-of-week) or five (no seconds: second 0), each `*`, `?` (as `*`), a number, a range `a-b`,
// a step `*/s`, `a-b/s` or `a/s`, or a comma list of those. Day of week 0-7 (0 and 7 Sunday).
// When both day fields are restricted a day matching either fires (as in cron). Times are UTC,
// like every stamp of the logs. Names (JAN, MON) and the L, W and # extensions are refused at
// validation (lib/setting/not-implemented.ts) rather than misread.
const RANGES: Array<[number, number]> = [[0, 59], [0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];

export interface Cron {
  sec: Set<number>; min: Set<number>; hour: Set<number>; dom: Set<number>; month: Set<number>; dow: Set<number>;
  domAny: boolean; dowAny: boolean;
}

function parseField(text: string, [lo, hi]: [number, number], name: string): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\*|\?|\d+(?:-\d+)?)(?:\/(\d+))?$/.exec(part);
    if (m === null) throw new Error(`${name} field "${part}" is not a number, range, step or *`);
    let from = lo;
    let to = hi;
    if (m[1] !== '*' && m[1] !== '?') {
      const [a, b] = m[1]!.split('-').map(Number);
      from = a!;
      to = b ?? (m[2] === undefined ? a! : hi);
    }
    const step = m[2] === undefined ? 1 : Number(m[2]);
    if (from < lo || to > hi || from > to || step < 1) throw new Error(`${name} field "${part}" is outside ${lo}-${hi}`);
    for (let v = from; v <= to; v += step) out.add(v);
  }
  return out;
}

/** Parses a schedule; throws with a message naming the bad field. */
export function parseCron(expr: string): Cron {
  let f = expr.trim().split(/\s+/);
  if (f.length === 5) f = ['0', ...f];
  if (f.length !== 6) throw new Error('must have 5 or 6 fields');
  const names = ['second', 'minute', 'hour', 'day-of-month', 'month', 'day-of-week'];
  const [sec, min, hour, dom, month, dow] = f.map((x, i) => parseField(x, RANGES[i]!, names[i]!));
  if (dow!.has(7)) dow!.add(0);
  const any = (x: string): boolean => x === '*' || x === '?';
  return { sec: sec!, min: min!, hour: hour!, dom: dom!, month: month!, dow: dow!, domAny: any(f[3]!), dowAny: any(f[5]!) };
}

function dayMatches(c: Cron, d: Date): boolean {
  const dom = c.dom.has(d.getUTCDate());
  const dow = c.dow.has(d.getUTCDay());
  if (c.domAny) return dow;
  if (c.dowAny) return dom;
  return dom || dow;
}

/** The first time (ms, whole second) strictly after `after` that the schedule fires. */
export function nextFire(c: Cron, after: number): number {
  const d = new Date(Math.floor(after / 1000) * 1000 + 1000);
  // Each step jumps to the next candidate of the first field that does not match; the bound
  // covers years of days, so `0 0 0 29 2 *` still fires.
  for (let guard = 0; guard < 1_000_000; guard++) {
    if (!c.month.has(d.getUTCMonth() + 1) || !dayMatches(c, d)) d.setUTCHours(24, 0, 0, 0);
    else if (!c.hour.has(d.getUTCHours())) d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
    else if (!c.min.has(d.getUTCMinutes())) d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
    else if (!c.sec.has(d.getUTCSeconds())) d.setUTCSeconds(d.getUTCSeconds() + 1, 0);
    else return d.getTime();
  }
  throw new Error('the schedule never fires');
}
