import t from 'tap';
import { HashRing } from '../../lib/balance/ring.js';
import { loadLuaHash } from '../../lib/balance/lua-hash.js';

const FNV = `
function hash(key)
  local h = 0x811c9dc5
  for i = 1, #key do
    h = h ~ key:byte(i)
    h = (h * 0x01000193) & 0xffffffff
  end
  return h
end`;

t.test('a Lua hash(key) gives the same point for the same key and spreads keys over the ring', async (t) => {
  const hash = loadLuaHash('fnv.lua', FNV);
  t.equal(hash('a.com/x'), hash('a.com/x'));
  t.ok(hash('a.com/x') >= 0 && hash('a.com/x') <= 0xffffffff, 'an unsigned 32-bit point');
  const ring = new HashRing([0, 1, 2]);
  const owners = new Set<number>();
  for (let i = 0; i < 60; i++) owners.add(ring.ownerOfHash(hash(`a.com/obj/${i}`)));
  t.same([...owners].sort(), [0, 1, 2], 'every worker owns some keys');
});

t.test('a script may pin keys: the integer it returns is the ring point', async (t) => {
  const hash = loadLuaHash('pin.lua', 'function hash(key) if key:find("/static/", 1, true) then return 7 end return -1 end');
  t.equal(hash('a.com/static/app.js'), 7);
  t.equal(hash('a.com/page'), 0xffffffff, 'negative integers wrap to unsigned');
});

t.test('a script that does not compile, has no hash, or fails on a probe is refused naming the file', async (t) => {
  t.throws(() => loadLuaHash('bad.lua', 'function hash(key'), { code: 'LUA_HASH_INVALID', message: /bad\.lua/ });
  t.throws(() => loadLuaHash('none.lua', 'x = 1'), /none\.lua: the script defines no function hash/);
  t.throws(() => loadLuaHash('err.lua', 'function hash(key) error("boom") end'), /err\.lua: .*boom/);
  t.throws(() => loadLuaHash('str.lua', 'function hash(key) return "x" end'), /did not return an integer/);
});

t.test('a runtime failure on one key gives -1 so the caller can fall back', async (t) => {
  const hash = loadLuaHash('partial.lua', 'function hash(key) if key == "bad" then error("no") end return 1 end');
  t.equal(hash('bad'), -1);
  t.equal(hash('good'), 1);
});
