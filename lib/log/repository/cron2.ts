// The upload time of a log repository (document 3: `rolling`, two cron fields, minute then
// hour). Each field is `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a comma list
// of those; the times are UTC like every log file name.
const FIELD_PART = /^(\*|\d+(?:-\d+)?)(?:\/(\d+))?$/;

export class CronError extends Error {}

function parseField(field: string, max: number, what: string): boolean[] {
  const on = new Array<boolean>(max + 1).fill(false);
  for (const part of field.split(',')) {
    const m = FIELD_PART.exec(part);
    if (m === null) throw new CronError(`${what} field "${field}": each part must be *, n, a-b, */n or a-b/n`);
    const step = m[2] === undefined ? 1 : Number(m[2]);
    let lo = 0;
    let hi = max;
    if (m[1] !== '*') {
      const [a, b] = m[1]!.split('-').map(Number);
      lo = a!;
      hi = b ?? (m[2] === undefined ? a! : max);
    }
    if (lo > hi || hi > max || step < 1) throw new CronError(`${what} field "${field}": values must be within 0-${max}, ranges ascending, steps at least 1`);
    for (let v = lo; v <= hi; v += step) on[v] = true;
  }
  return on;
}

export class MinuteHourCron {
  private readonly minutes: boolean[];
  private readonly hours: boolean[];

  constructor(readonly spec: string) {
    const fields = spec.trim().split(/\s+/);
    if (fields.length !== 2) throw new CronError(`"${spec}" must be two fields: minute hour`);
    this.minutes = parseField(fields[0]!, 59, 'minute');
    this.hours = parseField(fields[1]!, 23, 'hour');
  }

  /** The first matching minute strictly after `ms` (ms since the epoch, at second 0). */
  next(ms: number): number {
    let t = Math.floor(ms / 60_000) * 60_000 + 60_000;
    // At most a day of minutes: every valid spec matches at least once a day.
    for (let i = 0; i <= 1440; i++, t += 60_000) {
      const d = new Date(t);
      if (this.minutes[d.getUTCMinutes()] && this.hours[d.getUTCHours()]) return t;
    }
    throw new CronError(`"${this.spec}" never matches`);
  }
}
