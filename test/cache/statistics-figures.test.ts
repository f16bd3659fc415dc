// What a disk store tells the statistics: files open per host (reads and writes in progress), the
// writer's queue (WaitingFiles2Write), the per-host cache file events (Create, Erase) and the
// index census (FileTotal, WaitingFiles2Delete, the Disk group).
import t from 'tap';
import { IndexCensus } from '../../lib/cache/census.js';
import { cacheEvents } from '../../lib/cache/events.js';
import { finished, metaOf, readAll, store } from './store-contract.js';
import { openDisk, tempDir } from './fixtures/helpers.js';
import { waitFor } from '../helpers/wait.js';

const k = (url: string) => ({ vhost: 'f.example', url });

t.test('a write in progress is an open file and a waiting write; once committed it is a Create', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000_000 }] });
  const created = cacheEvents('f.example')?.create ?? 0;
  const w = s.createWriteStream(metaOf(k('/w'), '', { size: 2000 }));
  w.write(Buffer.alloc(1000, 1));
  t.equal(s.filesOpen('f.example'), 1, 'one file open for writing');
  t.ok(s.waitingWrites >= 1, 'the writer has it queued');
  w.end(Buffer.alloc(1000, 2));
  await finished(w);
  t.ok(await waitFor(() => s.filesOpen('f.example') === 0 && s.waitingWrites === 0), 'nothing open or waiting once it is written');
  t.equal(cacheEvents('f.example')!.create, created + 1, 'one object created');
  t.equal(s.filesOpen('other.example'), 0);
});

t.test('an aborted write is not a Create', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000_000 }] });
  const created = cacheEvents('f.example')?.create ?? 0;
  const w = s.createWriteStream(metaOf(k('/aborted'), '', { size: 2000 }));
  w.on('error', () => undefined);
  w.write(Buffer.alloc(1000, 1));
  w.destroy(new Error('client left'));
  t.ok(await waitFor(() => s.filesOpen('f.example') === 0), 'the file is closed');
  t.equal(cacheEvents('f.example')?.create ?? 0, created, 'no Create');
});

t.test('a body being read is an open file until its stream closes', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000_000 }] });
  await store(s, metaOf(k('/r')), Buffer.alloc(3000, 3));
  const obj = await s.get(k('/r'), '');
  const body = obj!.openBody();
  t.equal(s.filesOpen('f.example'), 1);
  t.equal((await readAll(body)).length, 3000);
  t.ok(await waitFor(() => s.filesOpen('f.example') === 0), 'closed after the read');
});

t.test('the census counts each host\'s objects, bytes and rows past their delete time, per disk', async (t) => {
  // metaOf's objects are cached at 1_700_000_000_000 and deleted an hour later.
  let clock = 1_700_000_000_000;
  const dir = tempDir(t);
  const s = openDisk(t, { disks: [{ path: dir, quota: 10_000_000 }], now: () => clock });
  await store(s, metaOf(k('/a')), Buffer.alloc(1000));
  await store(s, metaOf(k('/b'), '', { staleAt: clock + 500, deleteAt: clock + 1000 }), Buffer.alloc(500));
  await store(s, metaOf({ vhost: 'g.example', url: '/c' }), Buffer.alloc(200));
  const census = new IndexCensus(s.index.db.name);
  t.teardown(() => census.close());
  const rows = census.take(clock + 5000);
  const f = rows.find((r) => r.vhost === 'f.example')!;
  t.match(f, { disk: 0, files: 2, bytes: 1500, waitingDelete: 1, purged: 0, expired: 0, hardPurged: 0 });
  t.match(rows.find((r) => r.vhost === 'g.example'), { files: 1, bytes: 200, waitingDelete: 0 });
  const erased = cacheEvents('f.example')?.erase ?? 0;
  clock += 5000;
  t.equal(await s.sweepExpired(), 1, 'the sweep removes the row past its time');
  t.equal(cacheEvents('f.example')!.erase, erased + 1, 'an Erase');
  t.match(census.take(clock).find((r) => r.vhost === 'f.example'), { files: 1, waitingDelete: 0 });
});

t.test('a row evicted to make room on a full disk is an Erase of its host', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000 }] });
  const host = (url: string) => ({ vhost: 'e.example', url });
  for (const u of ['/a', '/b', '/c']) await store(s, metaOf(host(u)), Buffer.alloc(3_000, 1));
  t.equal(cacheEvents('e.example')?.erase ?? 0, 0);
  await store(s, metaOf(host('/d')), Buffer.alloc(3_000, 2));
  t.ok(await waitFor(() => (cacheEvents('e.example')?.erase ?? 0) === 1), 'the least recently used row went: one Erase');
  t.equal(cacheEvents('e.example')!.create, 4);
});
