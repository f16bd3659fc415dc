// The cron reader of the metrics schedule and of a repository's two-field upload time: fields,
// forms, and the next fire time (UTC).
import t from 'tap';
import { nextFire, parseCron, parseMinuteHour } from '../../lib/log/cron.js';

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

t.test('both day fields restricted: a day matching either fires, whichever comes first', async (t) => {
  // 2026-11-24 is a Tuesday; Friday is the 27th.
  t.equal(next('0 0 12 30 * 5', '2026-11-24T09:58:30'), '2026-11-27T12:00:00', 'the day of week first');
  t.equal(next('0 0 12 30 * 5', '2026-11-27T12:00:00'), '2026-11-30T12:00:00', 'then the day of month');
  t.equal(next('0 0 12 */1 * 5', '2026-11-24T09:58:30'), '2026-11-24T12:00:00', 'a stepped day of month is restricted: every day matches');
  t.equal(next('0 0 12 ? * 5', '2026-11-24T09:58:30'), '2026-11-27T12:00:00', '? is *: the day of week alone');
  t.equal(next('0 0 12 30 * ?', '2026-11-24T09:58:30'), '2026-11-30T12:00:00', 'and the day of month alone');
});

t.test('steps croner would refuse or misread mean what cron says', async (t) => {
  t.equal(next('5/20 * * * * *', '2026-11-24T09:58:30'), '2026-11-24T09:58:45', 'a/s: from a to the end');
  t.equal(next('0 0 12 * * */9', '2026-11-24T09:58:30'), '2026-11-29T12:00:00', 'a step wider than the field: its start (Sunday)');
  t.equal(next('0 0 12 * * 5-7', '2026-11-28T12:00:00'), '2026-11-29T12:00:00', '7 in a range is Sunday');
});

t.test('the next fire is the first whole second strictly after a time between seconds', async (t) => {
  t.equal(iso(nextFire(parseCron('* * * * * *'), at('2026-11-24T09:58:30.999'))), '2026-11-24T09:58:31');
  t.equal(iso(nextFire(parseCron('0 0 * * * *'), at('2026-11-24T09:59:59.500'))), '2026-11-24T10:00:00');
});

t.test('what it cannot read is an error naming the field', async (t) => {
  t.throws(() => parseCron('0 0 12 ? * MON'), /day-of-week field "MON"/);
  t.throws(() => parseCron('0 61 * * * *'), /minute field "61" is outside 0-59/);
  t.throws(() => parseCron('0 0 0 L * *'), /day-of-month field "L"/);
  t.throws(() => parseCron('* * *'), /5 or 6 fields/);
  // Forms croner itself reads are refused before it sees them.
  t.throws(() => parseCron('0 0 12 * JAN *'), /month field "JAN"/);
  t.throws(() => parseCron('0 0 12 * * 1#2'), /day-of-week field "1#2"/);
  t.throws(() => parseCron('0 0 12 15W * *'), /day-of-month field "15W"/);
  t.throws(() => parseCron('0 0 12 * * 5L'), /day-of-week field "5L"/);
  t.throws(() => parseCron('0 0 12 1 * +1'), /day-of-week field "\+1"/);
  t.throws(() => parseCron('0 0 12 * * * 2027'), /5 or 6 fields/, 'no year field');
  t.throws(() => parseCron('0 0 0 31 2 *'), /never fires/, 'a day that never comes');
});

t.test('a repository upload time (minute hour) fires at the next matching minute and hour', async (t) => {
  const up = (expr: string, from: string): string => iso(nextFire(parseMinuteHour(expr), at(from)));
  t.equal(up('* *', '2026-01-01T10:00:30'), '2026-01-01T10:01:00', 'every minute: the next one, at second 0');
  t.equal(up('*/15 *', '2026-01-01T10:15:00'), '2026-01-01T10:30:00', 'strictly after the given time');
  t.equal(up('5 3', '2026-01-01T10:00:00'), '2026-01-02T03:05:00', 'daily at 03:05: tomorrow');
  t.equal(up('0,30 8-9', '2026-01-01T09:31:00'), '2026-01-02T08:00:00', 'lists and ranges');
  t.equal(up('10-50/20 *', '2026-01-01T10:31:00'), '2026-01-01T10:50:00', 'a stepped range');
});

t.test('a repository upload time that is not two valid fields is refused with the reason', async (t) => {
  t.throws(() => parseMinuteHour('* * *'), /two fields: minute hour/);
  t.throws(() => parseMinuteHour('60 *'), /minute field "60" is outside 0-59/);
  t.throws(() => parseMinuteHour('* 24'), /hour field "24" is outside 0-23/);
  t.throws(() => parseMinuteHour('L *'), /minute field "L" is not a number/);
});
