import t from 'tap';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiskStore } from '../../lib/cache/disk-store.js';
import { FLAG_PURGE } from '../../lib/cache/prefix.js';
import { metaOf, readAll, runStoreContract, store } from './store-contract.js';
import { openDisk, tempDir } from './fixtures/helpers.js';
import { waitFor } from '../helpers/wait.js';

runStoreContract(t, 'DiskStore', async (t) => openDisk(t, { disks: [{ path: tempDir(t), quota: 50_000_000 }] }));

const k = (url: string) => ({ vhost: 'd.example', url });

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
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000_000 }] });
  for (let i = 0; i < 1_203; i++) await store(s, metaOf(k(`/many/${i}`)), 'b');
  t.equal(await s.markByPrefix('d.example', '/many/', { invalidated: 2 }), 1_203);
  t.equal(await s.deleteByPrefix('d.example', '/many/'), 1_203);
  t.same(s.listByPrefix('d.example', '/'), []);
});

t.test('a cache directory that cannot be created is Invalid and writes use the other disk', async (t) => {
  const base = tempDir(t);
  writeFileSync(join(base, 'a-file'), 'not a directory');
  const s = openDisk(t, { disks: [{ path: join(base, 'good'), quota: 1_000_000 }, { path: join(base, 'a-file', 'cache'), quota: 1_000_000 }] });
  t.same(s.diskStatus().map((d) => d.status), ['Normal', 'Invalid']);
  for (let i = 0; i < 20; i++) await store(s, metaOf(k(`/f/${i}`)), 'body');
  for (let i = 0; i < 20; i++) t.equal((await s.get(k(`/f/${i}`), ''))!.size, 4);
  t.equal(s.listByPrefix('d.example', '/f/').filter((r) => r.disk !== 0).length, 0, 'every body is on disk 0');
});

t.test('a disk whose writes keep failing becomes Invalid, its entries become misses and writes move to the other disk', async (t) => {
  const base = tempDir(t);
  const d1 = join(base, 'd1');
  const s = openDisk(t, { disks: [{ path: join(base, 'd0'), quota: 1_000_000 }, { path: d1, quota: 1_000_000 }], maxConsecutiveErrors: 3 });
  for (let i = 0; i < 20; i++) await store(s, metaOf(k(`/before/${i}`)), 'body');
  const onD1 = s.listByPrefix('d.example', '/before/').filter((r) => r.disk === 1);
  t.ok(onD1.length > 0, 'both disks are in use at first');
  rmSync(d1, { recursive: true, force: true });
  writeFileSync(d1, 'the disk is gone'); // every path under it now fails with ENOTDIR
  for (let i = 0; i < 30; i++) await store(s, metaOf(k(`/after/${i}`)), 'body');
  t.same(s.diskStatus().map((d) => d.status), ['Normal', 'Invalid']);
  for (let i = 0; i < 30; i++) t.ok(await s.get(k(`/after/${i}`), ''), `write ${i} landed on the good disk`);
  t.equal(await s.get(onD1[0]!.key, ''), undefined, 'an entry of the Invalid disk is a miss');
  t.notOk((await s.variants(onD1[0]!.key)).length, 'and is not listed');
});

t.test('a body file removed behind the index fails the read and drops the row', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 1_000_000 }] });
  await store(s, metaOf(k('/gone')), 'body');
  const got = s.getSync(k('/gone'), '')!;
  rmSync(got.path);
  await t.rejects(readAll(got.openBody()), { code: 'ENOENT' });
  t.equal(await s.get(k('/gone'), ''), undefined);
});

t.test('entries past their deleteAt are swept', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 1_000_000 }] });
  await store(s, metaOf(k('/old'), '', { deleteAt: 1000 }), 'x');
  await store(s, metaOf(k('/new'), '', { deleteAt: Date.now() + 60_000 }), 'y');
  t.equal(await s.sweepExpired(), 1);
  t.equal(await s.get(k('/old'), ''), undefined);
  t.ok(await s.get(k('/new'), ''));
});
