import t from 'tap';
import { parseSetting } from '../../lib/setting/load.js';
import { ignoredSettingFields } from '../../lib/setting/semantic.js';
import { minimal } from './fixtures/helpers.js';

t.test('a luaPath is accepted but reported as having no effect, naming its path', async (t) => {
  const raw = minimal() as { env?: Record<string, unknown> };
  raw.env = { ...raw.env, management: { cluster: { balance: { mode: 'hash', luaPath: '/etc/svc/hash.lua' } } } };
  const s = parseSetting(raw, { baseDir: '/srv/edge' });
  t.equal(s.env.management.cluster.balance.luaPath, '/etc/svc/hash.lua');
  const ignored = ignoredSettingFields(s);
  t.equal(ignored.length, 1);
  t.equal(ignored[0]!.path, 'env.management.cluster.balance.luaPath');
  t.match(ignored[0]!.message, /not implemented/);
});

t.test('without a luaPath nothing is reported', async (t) => {
  t.same(ignoredSettingFields(parseSetting(minimal(), { baseDir: '/srv/edge' })), []);
});
