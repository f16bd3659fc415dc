// The one cron reader of the logs: env.log.metrics.schedule, the central feeds' schedules and,
// through parseMinuteHour, the two-field upload time of a log repository
// (env.log.repository.list[].rolling). The fire times come from croner, the maintained
// scheduler; this module fixes the dialect croner is handed, so every schedule means what the
// documents say:
// - six fields (second minute hour day-of-month month day-of-week) or five (no seconds: second
//   0), each `*`, `?` (as `*`), a number, a range `a-b`, a step `*/s`, `a-b/s` or `a/s`, or a
//   comma list of those; day of week 0-7 (0 and 7 Sunday);
// - when both day fields are restricted a day matching either fires (as in cron: croner's
//   default, `domAndDow: false`);
// - times are UTC, like every stamp of the logs.
// Croner reads more (names such as JAN and MON, L, W, #, `+`, a year field); those are refused
// here, before croner sees the string, with a message naming the field, so validation
// (lib/setting-check/semantic.ts and friends) refuses them rather than letting them be misread.
import { Cron as Croner } from 'croner';

/** A checked schedule: a croner pattern that is never started (no function, no timer). */
export type Cron = Croner;

const NAMES = ['second', 'minute', 'hour', 'day-of-month', 'month', 'day-of-week'];
const RANGES: Array<[number, number]> = [[0, 59], [0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];

/**
 * Checks one field against our dialect and returns it as croner writes it: `a/s` becomes
 * `a-hi/s` (croner refuses a numeric start before a step unless told to be sloppy).
 */
function checkField(text: string, i: number): string {
  const [lo, hi] = RANGES[i]!;
  return text.split(',').map((part) => {
    const m = /^(\*|\?|\d+(?:-\d+)?)(?:\/(\d+))?$/.exec(part);
    if (m === null) throw new Error(`${NAMES[i]} field "${part}" is not a number, range, step or *`);
    let from = lo;
    let to = hi;
    if (m[1] !== '*' && m[1] !== '?') {
      const [a, b] = m[1]!.split('-').map(Number);
      from = a!;
      to = b ?? (m[2] === undefined ? a! : hi);
    }
    const step = m[2] === undefined ? 1 : Number(m[2]);
    if (from < lo || to > hi || from > to || step < 1) throw new Error(`${NAMES[i]} field "${part}" is outside ${lo}-${hi}`);
    if (m[2] === undefined) return part;
    // A step wider than its range selects the start alone; croner refuses a step above the
    // field's maximum (`*/9` in day-of-week), so it gets the start.
    if (step > to - from) return String(from);
    return /^\d+$/.test(m[1]!) ? `${from}-${to}/${step}` : part;
  }).join(',');
}

/** Parses a schedule; throws with a message naming the bad field, or when it never fires. */
export function parseCron(expr: string): Cron {
  let f = expr.trim().split(/\s+/);
  if (f.length === 5) f = ['0', ...f];
  if (f.length !== 6) throw new Error('must have 5 or 6 fields');
  const pattern = f.map(checkField).join(' ');
  const cron = new Croner(pattern, { mode: '6-part', timezone: 'Etc/UTC', domAndDow: false });
  // A day that does not exist (`0 0 0 31 2 *`): refused now rather than when it is first due.
  if (cron.nextRun(new Date(0)) === null) throw new Error(`"${expr}" never fires`);
  return cron;
}

/** A repository's `minute hour`: every day, at second 0; throws with a message naming the bad field. */
export function parseMinuteHour(expr: string): Cron {
  const f = expr.trim().split(/\s+/);
  if (f.length !== 2) throw new Error(`"${expr}" must be two fields: minute hour`);
  return parseCron(`${f[0]} ${f[1]} * * *`);
}

/** The first time (ms, whole second) strictly after `after` that the schedule fires. */
export function nextFire(c: Cron, after: number): number {
  const next = c.nextRun(new Date(after));
  if (next === null) throw new Error('the schedule never fires');
  return next.getTime();
}
