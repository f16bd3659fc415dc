// In-process: the redefinition a worker hands to the owner of a hooked request's key.
import t from 'tap';
import { hookedFrom, hookedValue } from '../../lib/pipeline/parts/hook-hand-off.js';
import type { HookRedefinition } from '../../lib/hook/answer.js';

const hook: HookRedefinition = {
  end: undefined, headerEdits: [{ key: 'x-a', mode: 'set', value: '1', match: undefined, replace: undefined }] as HookRedefinition['headerEdits'],
  cacheKey: '/k/\u00e9', cacheTtl: 30, cacheResult: 'TCP_HIT', vhost: 'other.com',
  originRequest: { method: 'GET', url: '/origin/path', body: undefined, headers: [{ key: 'x-h', value: 'v\u00ff' }] },
  fields: { userData: { a: 1 } },
};

t.test('the owner gets the key, TTL, result and origin request; edits and vhost are in the request already', async (t) => {
  const value = hookedValue(hook);
  t.match(value, /^[A-Za-z0-9_-]+$/, 'a header-safe value whatever the field bytes');
  t.strictSame(hookedFrom(value), {
    end: undefined, headerEdits: [], cacheKey: '/k/\u00e9', cacheTtl: 30, cacheResult: 'TCP_HIT', vhost: undefined,
    originRequest: { method: 'GET', url: '/origin/path', body: undefined, headers: [{ key: 'x-h', value: 'v\u00ff' }] }, fields: {},
  });
});

t.test('no originRequest stays none; an unknown cacheResult or a value not ours is dropped', async (t) => {
  const plain = hookedFrom(hookedValue({ ...hook, originRequest: undefined, cacheTtl: undefined, cacheKey: undefined }));
  t.equal(plain?.originRequest, undefined);
  t.equal(plain?.cacheKey, undefined);
  t.equal(plain?.cacheTtl, undefined);
  const bad = Buffer.from(JSON.stringify({ k: '/x', r: 'TCP_NOPE' })).toString('base64url');
  t.equal(hookedFrom(bad)?.cacheResult, undefined);
  t.equal(hookedFrom('%%%'), undefined);
  t.equal(hookedFrom(Buffer.from('null').toString('base64url')), undefined);
});
