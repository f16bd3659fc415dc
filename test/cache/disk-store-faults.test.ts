// DiskStore when its disks fail: a directory that cannot be created, writes that keep failing, a
// body file removed behind the index; and the sweep of expired rows. Split from
// disk-store.test.ts so that tap runs the two side by side; each case opens its own store (the
// failures are per disk), except the last two, which share one.
import t from 'tap';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { metaOf, readAll, store } from './store-contract.js';
import { openDisk, tempDir } from './fixtures/helpers.js';

const k = (url: string) => ({ vhost: 'd.example', url });

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

const plain = openDisk(t, { disks: [{ path: tempDir(t), quota: 1_000_000 }] });

t.test('a body file removed behind the index fails the read and drops the row', async (t) => {
  const s = plain;
  await store(s, metaOf(k('/gone')), 'body');
  const got = s.getSync(k('/gone'), '')!;
  rmSync(got.path);
  await t.rejects(readAll(got.openBody()), { code: 'ENOENT' });
  t.equal(await s.get(k('/gone'), ''), undefined);
});

t.test('entries past their deleteAt are swept', async (t) => {
  // The row of /gone above was dropped: these two are the store's only rows.
  const s = plain;
  await store(s, metaOf(k('/old'), '', { deleteAt: 1000 }), 'x');
  await store(s, metaOf(k('/new'), '', { deleteAt: Date.now() + 60_000 }), 'y');
  t.equal(await s.sweepExpired(), 1);
  t.equal(await s.get(k('/old'), ''), undefined);
  t.ok(await s.get(k('/new'), ''));
});
