// The metrics schedule's cron reader: fields, forms, and the next fire time (UTC).
import t from 'tap';
import { nextFire, parseCron } from '../../lib/log/global/cron.js';

const at = (s: string): number => Date.parse(`${s}Z`);
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19);
const next = (expr: string, from: string): string => iso(nextFire(parseCron(expr), at(from)));

t.test('the default schedule fires at every fifth minute on the clock', async (t) => {
  t.equal(next('0 */5 * * * *', '2026-11-24T09:58:30'), '2026-11-24T10:00:00');
  t.equal(next('0 */5 * * * *', '2026-11-24T10:00:00'), '2026-11-24T10:05:00', 'strictly after');
});

t.test('five fields mean second 0', async (t) => {
  t.equal(next('30 2 * * *', '2026-11-24T09:58:30'), '2026-11-25T02:30:00');
});

t.test('every second, ranges with steps, lists', async (t) => {
  t.equal(next('* * * * * *', '2026-11-24T09:58:30'), '2026-11-24T09:58:31');
  t.equal(next('10-40/15 * * * * *', '2026-11-24T09:58:30'), '2026-11-24T09:58:40');
  t.equal(next('0 0 8,20 * * *', '2026-11-24T09:58:30'), '2026-11-24T20:00:00');
  t.equal(next('0 0 0 1 1 *', '2026-11-24T09:58:30'), '2027-01-01T00:00:00', 'across the year');
});

t.test('day of week: 0 and 7 are Sunday; with a day of month too either matches', async (t) => {
  // 2026-11-24 is a Tuesday.
  t.equal(next('0 0 12 * * 7', '2026-11-24T09:58:30'), '2026-11-29T12:00:00');
  t.equal(next('0 0 12 * * 0', '2026-11-24T09:58:30'), '2026-11-29T12:00:00');
  t.equal(next('0 0 12 26 * 0', '2026-11-24T09:58:30'), '2026-11-26T12:00:00');
  t.equal(next('0 0 0 29 2 *', '2026-11-24T09:58:30'), '2028-02-29T00:00:00', 'a leap day years away');
});

t.test('what it cannot read is an error naming the field', async (t) => {
  t.throws(() => parseCron('0 0 12 ? * MON'), /day-of-week field "MON"/);
  t.throws(() => parseCron('0 61 * * * *'), /minute field "61" is outside 0-59/);
  t.throws(() => parseCron('0 0 0 L * *'), /day-of-month field "L"/);
  t.throws(() => parseCron('* * *'), /5 or 6 fields/);
});
