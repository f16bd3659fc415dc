// The backup scheduler's own watch events and its hold on retention as the setting changes.
import t from 'tap';
import { LogHub } from '../../lib/log/hub.js';
import { shipFixture } from './fixtures/ship.js';
import { parseSetting } from '../../lib/setting-check/load.js';

const statsd = { type: 'statsd', path: '/', endpoint: { port: 9 } };

t.test('the scheduler writes started, changed and removed as its repositories come and go', async (t) => {
  const f = shipFixture(t);
  f.configure(statsd);
  t.same(f.events.map((e) => e.event), ['00030001']);
  t.match(f.events[0]!.body, { repository: { list: [{ name: 'r', type: 'statsd' }] } }, 'the body is the whole env.log');
  f.configure(statsd);
  t.same(f.events.map((e) => e.event), ['00030001'], 'the same setting again changes nothing');
  f.configure({ ...statsd, rolling: '*/5 *' });
  t.same(f.events.map((e) => e.event), ['00030001', '00030003'], 'a repository changed');
  f.scheduler.configure(parseSetting({ hosting: [] }), []);
  t.same(f.events.map((e) => e.event), ['00030001', '00030003', '00030002'], 'no log backed up any more');
  t.same(f.events[2]!.body, {});
});

t.test('retention holds a log back only while a repository still has to receive its files', async (t) => {
  const f = shipFixture(t, { retention: 1 });
  f.configure({ type: 'logagent', path: 'x', endpoint: { url: 'http://127.0.0.1:9/' } });
  await f.roll(['a']);
  await f.roll(['b']);
  t.equal(f.ls().length, 3, 'two unshipped rolled files and the current one');
  f.scheduler.configure(parseSetting({ hosting: [] }), []);
  await f.roll(['c']);
  t.equal(f.ls().length, 1, 'no repository any more: plain retention');
});

t.test('the log writer names what each file is backed up to (access, origin, dns, monitoring): a host file by its host, a unified file as unify', async (t) => {
  const repo = (name: string) => ({ name, type: 'statsd', rolling: '* *', path: '/', endpoint: {} });
  const host = (name: string, backup: string[]) => ({ name, origin: { address: ['127.0.0.1:9'] }, functions: { operations: { log: { access: { backup } } } } });
  const setting = parseSetting({
    env: { home: '/tmp/svc-hub-test', log: { repository: { list: [repo('a'), repo('b')] } } },
    functions: { operations: { log: { meta: { dir: 'logs' }, access: { rolling: { size: 1 } }, origin: { rolling: { size: 1 }, unify: true, backup: ['b'] } } } },
    hosting: [host('one.test', ['a']), host('two.test', ['a', 'b']), host('three.test', []), {
      name: 'four.test', origin: { address: ['localhost:9'] },
      functions: { operations: { log: { access: { enable: false }, dns: { enable: true, rolling: { time: 1 }, backup: ['a'] }, monitoring: { enable: true, rolling: { time: 5 }, backup: ['b'] } } } },
    }],
  });
  const hub = new LogHub(() => undefined);
  hub.configure(setting, '/tmp/svc-hub-test');
  t.teardown(() => hub.close());
  const sources = hub.backupSources().map((s) => ({ dir: s.dir, logtype: s.logtype, domain: s.domain, repositories: s.repositories.sort() }));
  t.same(sources, [
    { dir: '/tmp/svc-hub-test/logs/one.test', logtype: 'access', domain: 'one.test', repositories: ['a'] },
    { dir: '/tmp/svc-hub-test/logs', logtype: 'origin', domain: 'unify', repositories: ['b'] },
    { dir: '/tmp/svc-hub-test/logs/two.test', logtype: 'access', domain: 'two.test', repositories: ['a', 'b'] },
    { dir: '/tmp/svc-hub-test/logs/four.test', logtype: 'dns', domain: 'four.test', repositories: ['a'] },
    { dir: '/tmp/svc-hub-test/logs/four.test', logtype: 'monitoring', domain: 'four.test', repositories: ['b'] },
  ]);
});
