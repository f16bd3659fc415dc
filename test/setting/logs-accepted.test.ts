// Every log of document 3 is built: each can be turned on, rolled and shipped, and is accepted;
// a bad value is refused at its JSON path.
import t from 'tap';
import { issuesOf, minimalHost } from './fixtures/helpers.js';

const refused = (input: unknown): string[] => issuesOf(input).map((i) => `${i.path}: ${i.message}`);

t.test('the defaults and the implemented logs are accepted', async (t) => {
  t.same(refused({ hosting: [minimalHost] }), []);
  t.same(refused({
    functions: { operations: { log: { meta: { dir: 'logs' }, access: { form: 'custom', format: '%a %s', rolling: { time: 10, size: 5 }, retention: 3, compression: true, unify: true, xff: 'clientIp', loopback: true }, origin: { rolling: { size: 1 }, loopback: true } } } },
    env: { log: { info: { dir: 'x' }, watch: { events: { setting: { enable: false } } } } },
    hosting: [minimalHost],
  }), []);
});

t.test('every log of document 3 can be turned on, with rolling and compression of the global logs', async (t) => {
  t.same(refused({
    env: { log: {
      meta: { port: 8514 }, info: { rolling: { time: 1440 }, compression: true }, watch: { rolling: { size: 10 } },
      error: { enable: true, rolling: { time: 60, size: 5 }, compression: true, filter: { minLevel: 'Warning', patterns: { include: ['^x'], exclude: ['y$'] } } },
      metrics: { enable: true, schedule: '*/10 * * * * *', rolling: { time: 1440 } }, system: { enable: true }, originError: { enable: true, warning: true },
    } },
    hosting: [{ ...minimalHost, functions: { operations: { log: { dns: { enable: true }, monitoring: { enable: true, form: 'xml' } } } } }],
  }), []);
});

t.test('a bad error-log pattern is refused at its JSON path', async (t) => {
  const issues = refused({ env: { log: { error: { filter: { patterns: { include: ['ok', '(unclosed'], exclude: ['[z-a]'] } } } } }, hosting: [minimalHost] });
  t.same(issues.map((i) => i.split(':')[0]), ['env.log.error.filter.patterns.include[1]', 'env.log.error.filter.patterns.exclude[0]']);
  t.ok(issues.every((i) => i.includes('regular expression')), 'each says what is wrong');
});

t.test('a metrics schedule in a cron dialect the server does not read is refused', async (t) => {
  const issues = refused({ env: { log: { metrics: { schedule: '0 0 12 ? * MON' } } }, hosting: [minimalHost] });
  t.same(issues.map((i) => i.split(':')[0]), ['env.log.metrics.schedule']);
  t.match(issues[0], /day-of-week field "MON"/);
  t.same(refused({ env: { log: { metrics: { schedule: '0 0 99 * * *' } } }, hosting: [minimalHost] }).map((i) => i.split(':')[0]), ['env.log.metrics.schedule']);
  // Croner (which computes the fire times) reads these; the validation still refuses them.
  for (const [schedule, field] of [['0 0 12 * JAN *', 'month'], ['0 0 12 L * *', 'day-of-month'], ['0 0 12 15W * *', 'day-of-month'], ['0 0 12 * * 1#2', 'day-of-week']]) {
    const got = refused({ env: { log: { metrics: { schedule } } }, hosting: [minimalHost] });
    t.match(got, [new RegExp(`^env\\.log\\.metrics\\.schedule: ${field} field .* \\(names and the L, W and # forms are not supported\\)$`)], schedule);
  }
});

t.test('every log ships to repositories; one that does not roll is refused at rolling (metrics snapshots need no rolling)', async (t) => {
  const repo = { name: 'r', type: 'statsd', rolling: '* *', path: '/', endpoint: { port: 8125, exports: { enable: false, matchingList: [] } } };
  t.same(refused({
    env: { log: {
      repository: { list: [repo] },
      info: { backup: ['r'], rolling: { time: 10 } }, watch: { backup: ['r'], rolling: { size: 1 } }, error: { enable: true, backup: ['r'], rolling: { time: 60 } },
      metrics: { enable: true, backup: ['r'] },
    } },
    functions: { operations: { log: { access: { backup: ['r'], rolling: { size: 1 } } } } },
    hosting: [{ ...minimalHost, functions: { operations: { log: {
      origin: { backup: ['r'], rolling: { time: 10 } }, dns: { enable: true, backup: ['r'], rolling: { time: 10 } }, monitoring: { enable: true, backup: ['r'], rolling: { size: 1 } },
    } } } }],
  }), []);
  const issues = refused({
    env: { log: { repository: { list: [repo] }, info: { backup: ['r'] }, watch: { backup: ['r'] } } },
    hosting: [{ ...minimalHost, functions: { operations: { log: { dns: { enable: true, backup: ['r'] } } } } }],
  });
  t.same(issues.map((i) => i.split(':')[0]).sort(), ['env.log.info.rolling', 'env.log.watch.rolling', 'hosting[0].functions.operations.log.dns.rolling']);
  t.match(issues.find((i) => i.startsWith('env.log.watch.rolling')), /watch log is backed up to r; a repository receives rolled files: set rolling.time or rolling.size/);
});
