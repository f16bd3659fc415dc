import t from 'tap';
import { checkHttps, parseQuery, runQuery } from '../../lib/query/index.js';
import { certHome, hosting, querySetting, source } from './fixtures.js';

const { home, cleanup } = certHome();
t.teardown(cleanup);

t.test('queries parse into a target, a form and steps, with or without /get/', async (t) => {
  t.strictSame(parseQuery('setting'), { target: 'setting', form: 'running', steps: [] });
  t.strictSame(parseQuery('/get/setting/running'), { target: 'setting', form: 'running', steps: [] });
  t.strictSame(parseQuery('get/setting.env.cache'), {
    target: 'setting', form: 'running', steps: [{ kind: 'member', name: 'env' }, { kind: 'member', name: 'cache' }],
  });
  t.strictSame(parseQuery('setting[a.com]/artifact.origin'), {
    target: 'setting',
    form: 'artifact',
    steps: [{ kind: 'member', name: 'hosting' }, { kind: 'name', name: 'a.com' }, { kind: 'member', name: 'origin' }],
  });
  t.strictSame(parseQuery('setting.hosting[12]'), { target: 'setting', form: 'running', steps: [{ kind: 'member', name: 'hosting' }, { kind: 'index', index: 12 }] });
  t.strictSame(parseQuery('hosting[name=12]'), { target: 'hosting', select: { kind: 'name', name: '12' } }, 'name= selects a host named by digits');
  t.strictSame(parseQuery('hosting'), { target: 'hosting' });
  for (const q of ['https', 'discover', 'license'] as const) t.strictSame(parseQuery(`/get/${q}`), { target: q });
  t.throws(() => parseQuery('setting.hosting[0'), { code: 'QUERY_BAD', status: 400, message: /^bad query: / });
  t.throws(() => parseQuery('weather'), { code: 'QUERY_UNKNOWN', status: 404 });
});

t.test('runQuery answers the outcomes the routes and the command line share', async (t) => {
  const src = source(querySetting(home));
  t.match(await runQuery('setting.hosting[name=c.com].origin.address', src), { status: 200, result: ['10.0.0.9:8080'], reason: null });
  t.match(await runQuery('setting.hosting[name=c.com', src), { status: 400, reason: /^bad query: "\[" at offset \d+ is not closed$/ });
  t.match(await runQuery('weather', src), { status: 404, reason: /^unknown query "weather"/ });
  t.match(await runQuery('license', src), { status: 404, reason: 'no license service' });
  t.match(await runQuery('discover', src), { status: 200, result: [] });
});

t.test('an expired or not yet valid certificate makes its HTTPS service not working', async (t) => {
  const setting = querySetting(home);
  t.equal((await checkHttps(setting)).status, 200);
  const later = await checkHttps(setting, Date.now() + 40 * 86_400_000);
  t.equal(later.status, 503);
  t.match(later.result[0], { name: 'a.com', enable: false, error: /^certificate a\.crt expired on \d{4}-/ });
  const earlier = await checkHttps(setting, Date.now() - 86_400_000);
  t.match(earlier.result[0], { enable: false, error: /^certificate a\.crt is not valid before / });
});

t.test('certificates given inline are checked', async (t) => {
  const fs = await import('node:fs/promises');
  const path = await import('node:path');
  const cert = await fs.readFile(path.join(home, 'a.crt'), 'utf8');
  const key = await fs.readFile(path.join(home, 'a.key'), 'utf8');
  const hosts = [
    { name: 'inline.com', https: [{ cert, key }] },
  ];
  const r = await checkHttps(querySetting(home, [...hosting().slice(1), ...hosts]));
  t.equal(r.status, 200);
  t.strictSame(r.result.map((e) => [e.name, e.enable]), [['inline.com', true]]);
});
