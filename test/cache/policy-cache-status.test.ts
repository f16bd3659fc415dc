// The spelling of a Cache-Status member (RFC 9211 over RFC 8941 Structured Fields), in-process:
// what the black-box tests cannot reach easily (escapes, bytes a URL may hold, edge values).
import t from 'tap';
import { appendCacheStatus, cacheNameItem, cacheStatusMember, ttlSeconds } from '../../lib/cache/policy/cache-status.js';

t.test('a name that is a token is written as is, any other as a quoted string with escapes', async (t) => {
  t.equal(cacheNameItem('svc'), 'svc');
  t.equal(cacheNameItem('edge-1.example.net'), 'edge-1.example.net');
  t.equal(cacheNameItem('Edge "A" \\ 1'), '"Edge \\"A\\" \\\\ 1"');
  t.equal(cacheNameItem('1st'), '"1st"', 'a token cannot start with a digit');
});

t.test('hit excludes fwd; stored and collapsed are written only with fwd; fwd-status only with a real status', async (t) => {
  t.equal(cacheStatusMember('c', { hit: true, fwd: 'stale', stored: true, ttl: 5 }), 'c; hit; ttl=5');
  t.equal(cacheStatusMember('c', { fwd: 'uri-miss', fwdStatus: 200, stored: true, collapsed: true, ttl: 60 }), 'c; fwd=uri-miss; fwd-status=200; ttl=60; stored; collapsed');
  t.equal(cacheStatusMember('c', { fwd: 'uri-miss', collapsed: false }), 'c; fwd=uri-miss; collapsed=?0');
  t.equal(cacheStatusMember('c', { fwd: 'stale', fwdStatus: 0, ttl: -3 }), 'c; fwd=stale; ttl=-3', 'no answer: no fwd-status; stale: negative ttl');
  t.equal(cacheStatusMember('c', {}), 'c', 'neither a hit nor forwarded: the bare name');
});

t.test('a key is a quoted string; bytes it cannot carry are percent-encoded', async (t) => {
  t.equal(cacheStatusMember('c', { hit: true, key: 'h.test/a?b="1"' }), 'c; hit; key="h.test/a?b=\\"1\\""');
  t.equal(cacheStatusMember('c', { hit: true, key: 'h.test/caf\u00e9\u2603' }), 'c; hit; key="h.test/caf%E9%E2%98%83"');
});

t.test('our member goes after those already there, one line or several', async (t) => {
  t.equal(appendCacheStatus(undefined, 'c; hit'), 'c; hit');
  t.equal(appendCacheStatus('o; hit', 'c; hit'), 'o; hit, c; hit');
  t.equal(appendCacheStatus(['a; hit', 'b; fwd=uri-miss'], 'c; hit'), 'a; hit, b; fwd=uri-miss, c; hit');
  t.equal(appendCacheStatus(' ', 'c; hit'), 'c; hit');
});

t.test('ttl counts whole seconds up while fresh and down once stale', async (t) => {
  t.equal(ttlSeconds(60_000, 0), 60);
  t.equal(ttlSeconds(60_000, 10), 60, 'ttl + Age (floored) is the lifetime');
  t.equal(ttlSeconds(1000, 1500), -1, 'stale by half a second');
  t.equal(ttlSeconds(1000, 1000), 0);
});
