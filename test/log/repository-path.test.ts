// The upload path variables of document 3 and the repository's two-field upload cron.
import t from 'tap';
import { MinuteHourCron } from '../../lib/log/repository/cron2.js';
import { expandPath, unknownVariables } from '../../lib/log/repository/path-template.js';

const ctx = { group: 'edge-kr', domain: 'www.example.com', hostname: 'node7', ip: '10.0.0.7', logtype: 'access', at: Date.UTC(2026, 1, 3, 4, 5, 6) };

t.test('every path variable of document 3 is replaced, in UTC', async (t) => {
  t.equal(expandPath('{group}/{domain}/{hostname}/{ip}/{logtype}/{timestamp}.log', ctx), 'edge-kr/www.example.com/node7/10.0.0.7/access/20260203040506.log');
  t.equal(expandPath('year={timestamp.year}/month={timestamp.month}/day={timestamp.day}/hour={timestamp.hour}/{timestamp.minute}{timestamp.second}', ctx),
    'year=2026/month=02/day=03/hour=04/0506');
  t.equal(expandPath('{timestamp.date}/{timestamp.time}-{logtype}', { ...ctx, logtype: 'origin' }), '20260203/040506-origin');
});

t.test('a leading slash does not make an empty first segment of the key', async (t) => {
  t.equal(expandPath('/logs/{domain}', ctx), 'logs/www.example.com');
});

t.test('unknown variables are reported, known ones are not', async (t) => {
  t.same(unknownVariables('{domain}/{Timestamp}/{timestamp.week}/{ip}'), ['Timestamp', 'timestamp.week']);
  t.same(unknownVariables('{group}/{timestamp.second}'), []);
});

t.test('the upload cron fires at the next matching minute and hour', async (t) => {
  const at = (h: number, m: number, s = 0) => Date.UTC(2026, 0, 1, h, m, s);
  t.equal(new MinuteHourCron('* *').next(at(10, 0, 30)), at(10, 1), 'every minute: the next one');
  t.equal(new MinuteHourCron('*/15 *').next(at(10, 15)), at(10, 30), 'strictly after the given time');
  t.equal(new MinuteHourCron('5 3').next(at(10, 0)), Date.UTC(2026, 0, 2, 3, 5), 'daily at 03:05: tomorrow');
  t.equal(new MinuteHourCron('0,30 8-9').next(at(9, 31)), Date.UTC(2026, 0, 2, 8, 0), 'lists and ranges');
  t.equal(new MinuteHourCron('10-50/20 *').next(at(10, 31)), at(10, 50), 'a stepped range');
});

t.test('an upload cron the scheduler cannot follow is refused with the reason', async (t) => {
  t.throws(() => new MinuteHourCron('* * *'), /two fields: minute hour/);
  t.throws(() => new MinuteHourCron('60 *'), /within 0-59/);
  t.throws(() => new MinuteHourCron('* 24'), /within 0-23/);
  t.throws(() => new MinuteHourCron('L *'), /each part must be/);
});
