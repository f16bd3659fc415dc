import t from 'tap';
import { existsSync } from 'node:fs';
import { DiskStore } from '../../lib/cache/disk-store.js';
import { FLAG_PURGE } from '../../lib/cache/prefix.js';
import { laterThanNow, metaOf, readAll, runStoreContract, store } from './store-contract.js';
import { defaultPolicyOptions } from '../../lib/cache/policy/index.js';
import type { NotModified } from '../../lib/cache/store.js';
import { openDisk, tempDir } from './fixtures/helpers.js';
import { waitFor } from '../helpers/wait.js';

// Opening a store starts its writer thread (about a second under the test loader): the contract
// and the purge share one store; the others need a quota, a clock or a usage count of their own.
// The failure cases are in disk-store-faults.test.ts, so that tap runs the two files side by side.
const plain = openDisk(t, { disks: [{ path: tempDir(t), quota: 50_000_000 }] });
runStoreContract(t, 'DiskStore', async () => plain);

const k = (url: string) => ({ vhost: 'd.example', url });

t.test('a 304 that reaches the index after a purge, an expire or an unsafe method\'s invalidation does not undo it', async (t) => {
  const s = plain;
  const f = (url: string) => ({ vhost: 'f.example', url });
  const stale = { headers: { etag: '"v1"', 'cache-control': 'max-age=60' }, cachedAt: Date.now() - 9_000, staleAt: Date.now() - 5_000 };
  for (const u of ['/304/purged', '/304/expired', '/304/posted']) await store(s, metaOf(f(u), '', stale), 'old copy');
  await store(s, metaOf(f('/304/was-expired'), '', { ...stale, invalidated: 2 }), 'old copy');
  await store(s, metaOf(f('/304/posted-expired'), '', { ...stale, invalidated: 2 }), 'old copy');
  // Each 304 answers a request sent now; it waits in the store's queue while the commands run.
  const sent = await laterThanNow();
  const nm: NotModified = { headers: { etag: '"v1"' }, requestTime: sent, receivedAt: sent + 1, policy: defaultPolicyOptions };
  for (const u of ['/304/purged', '/304/expired', '/304/posted', '/304/posted-expired', '/304/was-expired']) s.freshen(f(u), '', undefined, nm);
  await laterThanNow();
  await s.markByPrefix('f.example', '/304/purged', { invalidated: 1 });
  await s.markByPrefix('f.example', '/304/expired', { invalidated: 2, staleAt: Date.now() });
  await s.invalidateUrls('f.example', ['/304/posted', '/304/posted-expired']);
  await s.freshened();
  const state = async (u: string) => (await s.get(f(u), ''))!.invalidated;
  t.equal(await state('/304/purged'), 1, 'still purged');
  t.equal(await state('/304/expired'), 2, 'still expired');
  t.equal(await state('/304/posted'), 2, 'still invalidated by the unsafe method');
  t.equal(await state('/304/posted-expired'), 2, 'an expired copy the unsafe method found expired stays so');
  const lifted = (await s.get(f('/304/was-expired'), ''))!;
  t.equal(lifted.invalidated, 0, 'a copy expired before the request was sent is fresh again by the 304');
  t.equal(lifted.cachedAt, sent + 1);
});

t.test('a full disk evicts its least recently used entries to make room', async (t) => {
  let clock = Date.now();
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000 }], now: () => clock });
  for (const u of ['/a', '/b', '/c']) await store(s, metaOf(k(u)), Buffer.alloc(3_000, 1));
  const bPath = s.listByPrefix('d.example', '/b')[0]!.path; // listing does not count as a use
  clock += 60_000;
  t.ok(await s.get(k('/a'), ''), '/a is read again a minute later, so /b is now the least recently used');
  s.flushTouches();
  await store(s, metaOf(k('/d')), Buffer.alloc(3_000, 2));
  t.equal(await s.get(k('/b'), ''), undefined, '/b was evicted');
  for (const u of ['/a', '/c', '/d']) t.ok(await s.get(k(u), ''), `${u} stays`);
  t.ok(await waitFor(() => !existsSync(bPath)), 'the evicted body file is removed');
  const [disk] = s.diskStatus();
  t.equal(disk!.used, 9_000, 'usage is tracked per disk');
  t.ok(disk!.used <= disk!.quota);
});

t.test('a body larger than the disk quota is not stored', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 1_000 }] });
  await store(s, metaOf(k('/huge')), Buffer.alloc(5_000));
  t.equal(await s.get(k('/huge'), ''), undefined);
  t.equal(s.diskStatus()[0]!.used, 0);
});

t.test('entries survive closing and reopening the store (a restart)', async (t) => {
  const dir = tempDir(t);
  const first = new DiskStore({ disks: [{ path: dir, quota: 1_000_000 }] });
  await store(first, metaOf(k('/keep'), 'gzip', { headers: { etag: '"x"' } }), 'persisted body');
  await first.close();
  const again = openDisk(t, { disks: [{ path: dir, quota: 1_000_000 }] });
  const got = await again.get(k('/keep'), 'gzip');
  t.same(got!.headers, { etag: '"x"' });
  t.equal((await readAll(got!.openBody())).toString(), 'persisted body');
  t.equal(again.diskStatus()[0]!.used, 14, 'usage is kept across the restart');
});

t.test('the 304s of an object waiting to be written go to the index with the latest one, at the latest when the store closes', async (t) => {
  const dir = tempDir(t);
  const first = new DiskStore({ disks: [{ path: dir, quota: 1_000_000 }] });
  await store(first, metaOf(k('/revalidated'), '', { headers: { etag: '"x"', 'cache-control': 'max-age=0' }, staleAt: 1 }), 'body');
  const sent = await laterThanNow();
  for (let i = 0; i < 20; i++) {
    first.freshen(k('/revalidated'), '', undefined, { headers: { etag: '"x"', 'x-revalidation': String(i) }, requestTime: sent + i, receivedAt: sent + i + 1, policy: defaultPolicyOptions });
  }
  // Two more that say what the last one said: their times count all the same.
  for (let i = 20; i < 22; i++) {
    first.freshen(k('/revalidated'), '', undefined, { headers: { etag: '"x"', 'x-revalidation': '19' }, requestTime: sent + i, receivedAt: sent + i + 1, policy: defaultPolicyOptions });
  }
  await first.close();
  const again = openDisk(t, { disks: [{ path: dir, quota: 1_000_000 }] });
  const got = (await again.get(k('/revalidated'), ''))!;
  t.equal(got.headers['x-revalidation'], '19', 'the fields of the last 304');
  t.equal(got.cachedAt, sent + 22, 'received with the last one that said them');
  t.equal((await readAll(got.openBody())).toString(), 'body');
});

t.test('the 304s of two variants of one URL wait side by side: each reaches its own row with its latest fields', async (t) => {
  const dir = tempDir(t);
  const first = new DiskStore({ disks: [{ path: dir, quota: 1_000_000 }] });
  for (const v of ['gzip', 'br']) await store(first, metaOf(k('/two'), v, { headers: { etag: `"${v}"`, 'cache-control': 'max-age=0' }, staleAt: 1 }), v);
  const sent = await laterThanNow();
  const nm = (v: string, i: number) => ({ headers: { etag: `"${v}"`, 'x-revalidation': `${v}${i}` }, requestTime: sent + i, receivedAt: sent + i + 1, policy: defaultPolicyOptions });
  first.freshen(k('/two'), 'gzip', undefined, nm('gzip', 0));
  first.freshen(k('/two'), 'br', undefined, nm('br', 1));
  first.freshen(k('/two'), 'gzip', undefined, nm('gzip', 2));
  first.freshen(k('/two'), 'br', undefined, nm('br', 3));
  await first.close();
  const again = openDisk(t, { disks: [{ path: dir, quota: 1_000_000 }] });
  for (const [v, i] of [['gzip', 2], ['br', 3]] as const) {
    const got = (await again.get(k('/two'), v))!;
    t.equal(got.headers['x-revalidation'], `${v}${i}`, `${v}: the fields of its last 304`);
    t.equal(got.cachedAt, sent + i + 1, `${v}: received with it`);
  }
});

t.test('prefix helpers list, mark and delete whole directories of one vhost', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 1_000_000 }] });
  for (const u of ['/img/a.png', '/img/b.png', '/img/sub/c.png', '/imgx.png', '/js/app.js']) await store(s, metaOf(k(u)), 'x');
  await store(s, metaOf(k('/img/a.png'), 'gzip'), 'xx');
  await store(s, metaOf({ vhost: 'other', url: '/img/a.png' }), 'x');
  const listed = s.listByPrefix('d.example', '/img/');
  t.same(listed.map((r) => `${r.key.url}|${r.variantKey}`), ['/img/a.png|', '/img/a.png|gzip', '/img/b.png|', '/img/sub/c.png|']);
  t.ok(listed[0]!.hashKey.length === 40 && listed[0]!.fid.length > 0 && listed[0]!.disk === 0, 'records carry the fileinfo fields');
  t.equal(s.listByPrefix('d.example', '/img/', 2).length, 2, 'the limit holds');
  t.equal(await s.markByPrefix('d.example', '/img/', { invalidated: 1 }), 4);
  const purged = s.listByPrefix('d.example', '/img/b');
  t.equal(purged[0]!.invalidated, 1);
  t.equal(purged[0]!.flags & FLAG_PURGE, FLAG_PURGE, 'the Purge flag follows');
  t.equal((await s.get(k('/imgx.png'), ''))!.invalidated, 0, 'a sibling name with the same start is not under the prefix');
  t.equal(await s.markByPrefix('d.example', '/img/', { staleAt: 5 }), 4, 'expire sets the freshness end');
  t.equal((await s.get(k('/img/sub/c.png'), ''))!.staleAt, 5);
  t.equal(await s.deleteByPrefix('d.example', '/img/'), 4);
  t.same(s.listByPrefix('d.example', '/img'), s.listByPrefix('d.example', '/imgx'), 'only /imgx.png is left under /img');
  t.ok(await s.get({ vhost: 'other', url: '/img/a.png' }, ''), 'another vhost is untouched');
  t.equal(s.diskStatus()[0]!.used, 3, 'usage drops with the deleted bodies');
});

t.test('a purge of many entries runs in pages and reaches every one', async (t) => {
  const s = plain;
  // Written 100 at a time: rows completed together share one index commit (writerCommitDelayMs),
  // where one at a time each waits for its own.
  for (let i = 0; i < 1_203; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, 1_203 - i) }, (_, j) => store(s, metaOf(k(`/many/${i + j}`)), 'b')));
  }
  t.equal(s.listByPrefix('d.example', '/many/', 2_000).length, 1_203, 'every entry is stored');
  t.equal(await s.markByPrefix('d.example', '/many/', { invalidated: 2 }), 1_203);
  t.equal(await s.deleteByPrefix('d.example', '/many/'), 1_203);
  t.same(s.listByPrefix('d.example', '/'), []);
});
