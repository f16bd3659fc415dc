import t from 'tap';
import { MemoryStore } from '../../lib/cache/memory-store.js';
import { metaOf, readAll, runStoreContract, store } from './store-contract.js';

runStoreContract(t, 'MemoryStore', async () => new MemoryStore({ maxBytes: 16 * 1024 * 1024, maxObjectBytes: 1024 * 1024 }));

const k = (url: string) => ({ vhost: 'm.example', url });

t.test('the LRU evicts by bytes, least recently used first', async (t) => {
  const s = new MemoryStore({ maxBytes: 10_000, maxObjectBytes: 5_000 });
  for (const u of ['/a', '/b', '/c']) await store(s, metaOf(k(u)), Buffer.alloc(2_500));
  t.ok(s.peek(k('/a'), ''), '/a is used again, so /b is now the oldest');
  await store(s, metaOf(k('/d')), Buffer.alloc(2_500));
  t.equal(s.peek(k('/b'), ''), undefined, 'the least recently used entry went');
  for (const u of ['/a', '/c', '/d']) t.ok(s.peek(k(u), ''), `${u} stays`);
  t.ok(s.stats().bytes <= 10_000, 'the byte bound holds');
  t.equal(s.stats().entries, 3);
});

t.test('header bytes count toward the bound', async (t) => {
  const s = new MemoryStore({ maxBytes: 10_000, maxObjectBytes: 5_000 });
  const big = { 'x-big': 'h'.repeat(3_500) };
  for (const u of ['/a', '/b', '/c']) await store(s, metaOf(k(u), '', { headers: big }), 'tiny');
  t.equal(s.peek(k('/a'), ''), undefined, 'three entries of tiny bodies but big headers do not fit');
  t.ok(s.stats().bytes <= 10_000);
});

t.test('an object above maxObjectBytes is not stored, and an older copy of it is dropped', async (t) => {
  const s = new MemoryStore({ maxBytes: 100_000, maxObjectBytes: 1_000 });
  await store(s, metaOf(k('/big')), Buffer.alloc(800));
  t.ok(s.peek(k('/big'), ''));
  await store(s, metaOf(k('/big')), Buffer.alloc(1_001));
  t.equal(s.peek(k('/big'), ''), undefined);
  t.equal(s.stats().entries, 0);
  t.equal(s.stats().bytes, 0);
});

t.test('a memory hit is the same stored object with its body in one Buffer, without a Promise', async (t) => {
  const s = new MemoryStore({ maxBytes: 100_000 });
  await store(s, metaOf(k('/x'), 'gzip'), 'abcdef');
  const a = s.peek(k('/x'), 'gzip');
  const b = s.peek(k('/x'), 'gzip');
  t.ok(a !== undefined && a === b, 'no per-hit allocation of the entry');
  t.ok(Buffer.isBuffer(a!.body));
  t.equal(a!.body.toString(), 'abcdef');
  t.same(s.variantsSync(k('/x')).map((v) => v.variantKey), ['gzip']);
  t.equal((await readAll(a!.openBody(1, 2))).toString(), 'bc');
});

t.test('prefix operations touch only the URLs under the prefix of that vhost', async (t) => {
  const s = new MemoryStore({ maxBytes: 100_000 });
  for (const u of ['/img/a', '/img/b', '/imgx', '/js/c']) await store(s, metaOf(k(u)), 'x');
  await store(s, metaOf({ vhost: 'other', url: '/img/a' }), 'x');
  t.same(s.listByPrefix('m.example', '/img/').map((o) => o.key.url).sort(), ['/img/a', '/img/b']);
  t.equal(s.markByPrefix('m.example', '/img/', { invalidated: 1 }), 2);
  t.equal(s.peek(k('/img/a'), '')!.invalidated, 1);
  t.equal(s.peek(k('/imgx'), '')!.invalidated, undefined);
  t.equal(s.deleteByPrefix('m.example', '/img/'), 2);
  t.ok(s.peek(k('/imgx'), ''));
  t.ok(s.peek({ vhost: 'other', url: '/img/a' }, ''), 'another vhost is untouched');
});

t.test('each host\'s bytes and objects follow inserts, evictions and deletes (VirtualHost Memory, FileInstance, SecuredMemory)', async (t) => {
  const s = new MemoryStore({ maxBytes: 10_000, maxObjectBytes: 5_000 });
  const other = (url: string) => ({ vhost: 'o.example', url });
  await store(s, metaOf(k('/a')), Buffer.alloc(2_500));
  await store(s, metaOf(other('/x')), Buffer.alloc(2_500));
  const a = s.hostUsage('m.example');
  t.equal(a.objects, 1);
  t.ok(a.bytes > 2_500, 'the body and its bookkeeping');
  t.equal(s.hostUsage('o.example').objects, 1);
  for (const u of ['/b', '/c', '/d']) await store(s, metaOf(k(u)), Buffer.alloc(2_500));
  const after = s.hostUsage('m.example');
  const o = s.hostUsage('o.example');
  t.equal(after.objects + o.objects, s.stats().entries, 'the hosts add up to the store');
  t.equal(after.bytes + o.bytes, s.stats().bytes);
  t.equal(after.evictedObjects + o.evictedObjects, 2, 'two entries evicted to make room');
  t.ok(after.evictedBytes + o.evictedBytes > 5_000, 'their bytes counted as evicted');
  s.deleteSync(k('/d'));
  t.equal(s.hostUsage('m.example').objects, after.objects - 1, 'a delete is not an eviction');
  t.equal(s.hostUsage('m.example').evictedObjects, after.evictedObjects);
  t.same(s.hostUsage('nobody.example'), { bytes: 0, objects: 0, evictedBytes: 0, evictedObjects: 0 });
});
