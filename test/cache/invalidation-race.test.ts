// RFC 9111 4.4 across processes: an unsafe method invalidates a URL while a copy of it, fetched
// before, is still being written (by this or another worker's writer thread). That copy must
// land stale, never fresh old content; a copy fetched after the invalidation lands fresh.
import t from 'tap';
import { finished } from 'node:stream/promises';
import { DiskStore } from '../../lib/cache/disk-store.js';
import { metaOf } from './store-contract.js';
import { openDisk, tempDir } from './fixtures/helpers.js';

const k = (url: string) => ({ vhost: 'race.example', url });

t.test('a body fetched before an invalidation and committed after it lands invalidated and stale', async (t) => {
  const dir = tempDir(t);
  const writer = openDisk(t, { disks: [{ path: dir, quota: 10_000_000 }] });
  // Another worker: its own connection to the same index.
  const other = openDisk(t, { disks: [{ path: dir, quota: 10_000_000 }] });
  const fetchedAt = Date.now() - 50;
  const w = writer.createWriteStream(metaOf(k('/doc'), '', { requestTime: fetchedAt, cachedAt: fetchedAt + 1, staleAt: Date.now() + 600_000, size: 9 }));
  w.write('version 1');
  await other.invalidateUrls('race.example', ['/doc']);
  const invalidatedBy = Date.now();
  w.end();
  await finished(w);
  const row = await writer.get(k('/doc'), '');
  t.ok(row, 'the body is stored (it can be revalidated)');
  t.equal(row!.invalidated, 2, 'as invalidated: the next use revalidates');
  t.ok(row!.staleAt <= invalidatedBy, 'and stale');
  t.same((await other.variants(k('/doc'))).map((m) => m.invalidated), [2], 'the other worker sees the same');
});

t.test('a body fetched after the invalidation lands fresh', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000_000 }] });
  await s.invalidateUrls('race.example', ['/new']);
  const later = Date.now() + 5;
  const w = s.createWriteStream(metaOf(k('/new'), '', { requestTime: later, cachedAt: later, staleAt: later + 600_000, size: 9 }));
  w.end('version 2');
  await finished(w);
  const row = await s.get(k('/new'), '');
  t.equal(row!.invalidated, 0);
  t.ok(row!.staleAt > Date.now());
});

t.test('invalidateUrls marks every stored variant of the URLs stale and leaves other URLs alone', async (t) => {
  const s: DiskStore = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000_000 }] });
  const put = async (url: string, variant: string): Promise<void> => {
    const w = s.createWriteStream(metaOf(k(url), variant, { requestTime: Date.now() - 1000, staleAt: Date.now() + 600_000, size: 1 }));
    w.end('x');
    await finished(w);
  };
  await put('/v', 'gzip');
  await put('/v', 'br');
  await put('/keep', '');
  await s.invalidateUrls('race.example', ['/v']);
  t.same((await s.variants(k('/v'))).map((m) => m.invalidated), [2, 2]);
  t.same((await s.variants(k('/keep'))).map((m) => m.invalidated), [0]);
});
