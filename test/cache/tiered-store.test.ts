import t from 'tap';
import { rmSync } from 'node:fs';
import { TieredStore } from '../../lib/cache/tiered-store.js';
import { metaOf, readAll, runStoreContract, store } from './store-contract.js';
import { openDisk, tempDir } from './fixtures/helpers.js';

// Opening a disk store starts its writer thread (1-5 s under the test loader): the tiered stores
// share one disk store, each with a memory tier of its own (a second tiered store on the same
// disk is another worker), and the behaviours that need no store of their own share one, each on
// URLs of its own. Only the failing disk has a disk store of its own.
const disk = openDisk(t, { disks: [{ path: tempDir(t), quota: 50_000_000 }] });

function makeTiered(memoryObjectMax = 1024 * 1024, memory = { maxBytes: 4 * 1024 * 1024, maxObjectBytes: 1024 * 1024 }, onDisk = disk): TieredStore {
  return new TieredStore({ memory, disk: onDisk, memoryObjectMax });
}

const plain = makeTiered();
const small = makeTiered(1_000);

runStoreContract(t, 'TieredStore', async () => plain);
// Objects too big for memory go through the disk path of the tiered store.
runStoreContract(t, 'TieredStore (disk path)', async () => makeTiered(4));

const k = (url: string) => ({ vhost: 't.example', url });

t.test('a write lands in memory and on disk, and memory answers without the disk', async (t) => {
  const s = plain;
  await store(s, metaOf(k('/both')), 'twice');
  t.equal(s.memory.peek(k('/both'), '')!.body.toString(), 'twice', 'a synchronous memory hit');
  t.ok(s.disk.getSync(k('/both'), ''), 'the disk has it too');
});

t.test('a disk hit of a small object is promoted into memory', async (t) => {
  await store(plain, metaOf(k('/promote')), 'from disk');
  // Another worker: same disk, empty memory.
  const reader = makeTiered();
  t.equal(reader.memory.peek(k('/promote'), ''), undefined, 'not in this worker\'s memory at first');
  const got = await reader.get(k('/promote'), '');
  t.equal(got!.body?.toString(), 'from disk', 'served with its body in memory');
  t.ok(reader.memory.peek(k('/promote'), ''), 'the next hit is a memory hit');
});

t.test('a large object stays on disk only', async (t) => {
  const s = small;
  await store(s, metaOf(k('/large')), Buffer.alloc(5_000, 3));
  t.equal(s.memory.peek(k('/large'), ''), undefined);
  const got = await s.get(k('/large'), '');
  t.equal(got!.body, undefined, 'read from its file');
  t.equal((await readAll(got!.openBody())).length, 5_000);
});

t.test('a replacement too large for memory removes the older memory copy', async (t) => {
  const s = small;
  await store(s, metaOf(k('/grow')), 'small');
  await store(s, metaOf(k('/grow')), Buffer.alloc(5_000, 4));
  t.equal(s.memory.peek(k('/grow'), ''), undefined);
  t.equal((await s.get(k('/grow'), ''))!.size, 5_000);
});

t.test('a volatile entry stays in memory only', async (t) => {
  const s = plain;
  await store(s, metaOf(k('/vol'), '', { volatile: true }), 'memory only');
  t.ok(s.memory.peek(k('/vol'), ''));
  t.equal(s.disk.getSync(k('/vol'), ''), undefined);
  t.same((await s.variants(k('/vol'))).map((m) => m.variantKey), ['']);
});

t.test('memory stays within its bound however much is written', async (t) => {
  const s = new TieredStore({ memory: { maxBytes: 50_000, maxObjectBytes: 10_000 }, disk });
  for (let i = 0; i < 100; i++) await store(s, metaOf(k(`/n/${i}`)), Buffer.alloc(4_000));
  t.ok(s.memory.stats().bytes <= 50_000, `memory holds ${s.memory.stats().bytes} bytes`);
  t.ok(await s.get(k('/n/0'), ''), 'evicted from memory, still a disk hit');
});

t.test('a failing disk does not fail the write: the memory copy is kept', async (t) => {
  const dir = tempDir(t);
  const s = makeTiered(undefined, undefined, openDisk(t, { disks: [{ path: dir, quota: 50_000_000 }] }));
  rmSync(dir, { recursive: true, force: true });
  await store(s, metaOf(k('/nodisk')), 'still served');
  t.equal(s.memory.peek(k('/nodisk'), '')!.body.toString(), 'still served');
});

t.test('a prefix delete reaches both memory and disk', async (t) => {
  const s = plain;
  for (const u of ['/p/a', '/p/b', '/q']) await store(s, metaOf(k(u)), 'x');
  await store(s, metaOf(k('/p/v'), '', { volatile: true }), 'x');
  t.ok(s.memory.peek(k('/p/a'), '') && s.disk.getSync(k('/p/a'), ''), 'in memory and on disk');
  await s.deleteByPrefix('t.example', '/p/');
  t.equal(await s.get(k('/p/a'), ''), undefined);
  t.equal(await s.get(k('/p/v'), ''), undefined);
  t.ok(await s.get(k('/q'), ''));
});
