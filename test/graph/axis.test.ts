// Value axes on round steps, tick labels with units, time ticks per graph type.
import t from 'tap';
import { formatValue, timeTicks, valueAxis } from '../../lib/graph/axis.js';

t.test('the value axis holds zero and the largest value in round steps', async (t) => {
  t.same(valueAxis(0, 2.22), { lo: 0, hi: 2.5, ticks: [0, 0.5, 1, 1.5, 2, 2.5] });
  t.same(valueAxis(0, 23_000), { lo: 0, hi: 25_000, ticks: [0, 5000, 10_000, 15_000, 20_000, 25_000] });
  t.same(valueAxis(NaN, NaN).ticks[0], 0, 'no data: an axis from 0');
  const gib = 1024 ** 3;
  t.same(valueAxis(0, 3.06 * gib, 5, true).ticks, [0, 1, 2, 3, 4].map((n) => n * gib), 'bytes step in whole GiB');
  const neg = valueAxis(-30, 80);
  t.ok(neg.lo <= -30 && neg.lo > -60 && neg.hi >= 80 && neg.hi < 120, 'a negative byte hit ratio stays on the axis');
});

t.test('tick labels carry the unit with a prefix', async (t) => {
  t.equal(formatValue(25800, 'B/s'), '25.8 kB/s');
  t.equal(formatValue(3 * 1024 * 1024, 'B'), '3 MiB');
  t.equal(formatValue(250, '/s'), '250/s');
  t.equal(formatValue(1500, 'ms'), '1.5 s');
  t.equal(formatValue(12.5, '%'), '12.5%');
  t.equal(formatValue(100, 'sockets'), '100');
  t.equal(formatValue(250e6, 'B/s', true), '250M', 'the dash graph: the caption says the unit');
});

t.test('time ticks fall on round local times and are labelled sparsely', async (t) => {
  const from = new Date(2026, 10, 24, 7, 10).getTime() / 1000;
  const day = timeTicks('day', from, from + 2 * 86400);
  t.equal(day.length, 8, 'every 6 hours over 2 days');
  t.ok(day.every((x) => new Date(x.t * 1000).getHours() % 6 === 0 && new Date(x.t * 1000).getMinutes() === 0));
  t.ok(day.some((x) => x.label === 'Nov 25'), 'midnight shows the date');
  const year = timeTicks('year', from, from + 548 * 86400);
  t.ok(year.length >= 17 && year.length <= 19, 'one tick a month');
  t.ok(year.every((x) => new Date(x.t * 1000).getDate() === 1));
});
