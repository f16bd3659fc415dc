// Settings of document 3 not carried out yet are refused at validation, each at its JSON path
// with a message saying so, instead of being accepted and ignored.
import t from 'tap';
import { issuesOf, minimalHost } from './fixtures/helpers.js';

const refused = (input: unknown): string[] => issuesOf(input, undefined, false).map((i) => `${i.path}: ${i.message}`);

t.test('the defaults and the implemented logs are accepted', async (t) => {
  t.same(refused({ hosting: [minimalHost] }), []);
  t.same(refused({
    functions: { operations: { log: { meta: { dir: 'logs' }, access: { form: 'custom', format: '%a %s', rolling: { time: 10, size: 5 }, retention: 3, compression: true, unify: true, xff: 'clientIp', loopback: true }, origin: { rolling: { size: 1 }, loopback: true } } } },
    env: { log: { info: { dir: 'x' }, watch: { events: { setting: { enable: false } } } } },
    hosting: [minimalHost],
  }), []);
});

t.test('each log not built yet is refused when turned on, at its path', async (t) => {
  const issues = refused({
    env: { log: { meta: { port: 8514 }, error: { enable: true }, metrics: { enable: true }, system: { enable: true }, originError: { enable: true } } },
    hosting: [{ ...minimalHost, functions: { operations: { log: { dns: { enable: true }, monitoring: { enable: true } } } } }],
  });
  t.same(issues.map((i) => i.split(':')[0]), [
    'env.log.meta.port', 'env.log.error.enable', 'env.log.metrics.enable', 'env.log.system.enable', 'env.log.originError.enable',
    'hosting[0].functions.operations.log.dns.enable', 'hosting[0].functions.operations.log.monitoring.enable',
  ]);
  t.ok(issues.every((i) => i.includes('is not implemented yet')), 'each says why');
});

t.test('rolling and compression of the info and watch logs are refused', async (t) => {
  t.same(refused({ env: { log: { info: { rolling: { time: 1440 }, compression: true }, watch: { rolling: { size: 10 } } } }, hosting: [minimalHost] }).map((i) => i.split(':')[0]),
    ['env.log.info.rolling', 'env.log.info.compression', 'env.log.watch.rolling']);
});

t.test('access and origin logs ship to repositories; the logs that do not roll or exist yet are refused', async (t) => {
  const repo = { name: 'r', type: 'statsd', rolling: '* *', path: '/', endpoint: { port: 8125, exports: { enable: false, matchingList: [] } } };
  t.same(refused({
    env: { log: { repository: { list: [repo] } } },
    functions: { operations: { log: { access: { backup: ['r'], rolling: { size: 1 } } } } },
    hosting: [{ ...minimalHost, functions: { operations: { log: { origin: { backup: ['r'], rolling: { time: 10 } } } } } }],
  }), []);
  t.same(refused({
    env: { log: { repository: { list: [repo] }, info: { backup: ['r'] }, watch: { backup: ['r'] } } },
    hosting: [{ ...minimalHost, functions: { operations: { log: { dns: { backup: ['r'] } } } } }],
  }).map((i) => i.split(':')[0]), ['env.log.info.backup', 'env.log.watch.backup', 'hosting[0].functions.operations.log.dns.backup']);
});
