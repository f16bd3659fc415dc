import t from 'tap';
import { MemoryStore } from '../../lib/cache/memory-store.js';
import { defaultPolicyOptions } from '../../lib/cache/policy/options.js';
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

t.test('a hit moves an entry to the front only from the back half of the LRU, and an entry hit before every store is never evicted', async (t) => {
  // Four entries of about 2,830 bytes fit in 12,000; a fifth evicts the tail.
  const s = new MemoryStore({ maxBytes: 12_000, maxObjectBytes: 5_000 });
  for (const u of ['/a', '/b', '/c', '/d']) await store(s, metaOf(k(u)), Buffer.alloc(2_500));
  t.equal(s.stats().entries, 4);
  t.ok(s.peek(k('/c'), ''), '/c (in the front half) is hit: it keeps its place');
  t.ok(s.peek(k('/a'), ''), '/a (the tail, in the back half) is hit: it goes to the front');
  await store(s, metaOf(k('/e')), Buffer.alloc(2_500));
  t.equal(s.peek(k('/b'), ''), undefined, '/b, the oldest by promotion, went');
  await store(s, metaOf(k('/f')), Buffer.alloc(2_500));
  t.equal(s.peek(k('/c'), ''), undefined, '/c went next: its hit in the front half did not move it');
  for (const u of ['/a', '/d', '/e', '/f']) t.ok(s.peek(k(u), ''), `${u} stays`);
  for (let i = 0; i < 40; i++) {
    t.ok(s.peek(k('/a'), ''), `/a, hit before every store, is still held before /n${i}`);
    await store(s, metaOf(k(`/n${i}`)), Buffer.alloc(2_500));
    t.ok(s.stats().bytes <= 12_000, 'the byte bound holds');
  }
});

t.test('the variants of a URL come and go one by one: deleting or evicting one leaves the others', async (t) => {
  // Three entries of about 2,840 bytes fit in 9,000.
  const s = new MemoryStore({ maxBytes: 9_000, maxObjectBytes: 5_000 });
  await store(s, metaOf(k('/v'), 'br', { cachedAt: 1 }), Buffer.alloc(2_500));
  await store(s, metaOf(k('/v'), 'gzip', { cachedAt: 2 }), Buffer.alloc(2_500));
  await store(s, metaOf(k('/v'), 'zstd', { cachedAt: 3 }), Buffer.alloc(2_500));
  t.same(s.variantsSync(k('/v')).map((v) => v.variantKey), ['zstd', 'gzip', 'br'], 'newest first');
  t.equal(s.find('m.example', '/v', () => true, 0)?.variantKey, 'zstd', 'find takes the newest it accepts');
  t.equal(s.find('m.example', '/v', (o) => o.variantKey !== 'zstd', 0)?.variantKey, 'gzip');
  t.same(s.deleteSync(k('/v'), 'gzip'), ['gzip'], 'a variant between two goes');
  t.same(s.variantsSync(k('/v')).map((v) => v.variantKey), ['zstd', 'br']);
  // Two other entries: /v's br (the LRU tail) is evicted; zstd stays.
  await store(s, metaOf(k('/x')), Buffer.alloc(2_500));
  await store(s, metaOf(k('/y')), Buffer.alloc(2_500));
  t.same(s.variantsSync(k('/v')).map((v) => v.variantKey), ['zstd'], 'the evicted variant went, the other stays');
  t.equal(s.hostUsage('m.example').evictedObjects, 1);
  t.same(s.deleteSync(k('/v')), ['zstd']);
  t.same(s.variantsSync(k('/v')), []);
  t.equal(s.peek(k('/v'), 'zstd'), undefined);
  t.equal(s.stats().entries, 2);
});

t.test('a copy held after it left the store keeps none of its URL\'s other variants or LRU neighbours alive', async (t) => {
  const s = new MemoryStore({ maxBytes: 100_000 });
  await store(s, metaOf(k('/h'), 'br', { cachedAt: 1 }), Buffer.alloc(100));
  await store(s, metaOf(k('/h'), 'gzip', { cachedAt: 2 }), Buffer.alloc(100));
  await store(s, metaOf(k('/i')), Buffer.alloc(100));
  const held = s.peek(k('/h'), 'gzip')!;
  t.not(held.sibling, null, 'in the store it leads to the older variant');
  t.same(s.deleteSync(k('/h')), ['gzip', 'br'], 'every variant of the URL goes');
  t.equal(held.sibling, null, 'no link to the older variant');
  t.equal(held.prev, null);
  t.equal(held.next, null);
  t.equal(s.stats().entries, 1);
});

t.test('a 304 that repeats the held copy\'s fields gives it the new times and leaves its place and cost; one that changes a field makes a new copy', async (t) => {
  const s = new MemoryStore({ maxBytes: 100_000 });
  const fields = { etag: '"m"', 'cache-control': 'max-age=0', date: 'Sun, 29 Nov 2026 10:00:00 GMT' };
  await store(s, metaOf(k('/m'), '', { headers: fields, requestTime: 1_000, cachedAt: 1_001, staleAt: 1_001, deleteAt: 9_000 }), 'kept body');
  const held = s.peek(k('/m'), '')!;
  const bytes = s.stats().bytes;
  const nm = { headers: { ...fields }, requestTime: 5_000, receivedAt: 5_002, policy: defaultPolicyOptions };
  const renewed = s.freshen(k('/m'), '', { headers: held.headers, requestTime: 5_000, cachedAt: 5_002, staleAt: 5_002, deleteAt: 20_000, invalidated: 0 }, nm);
  t.equal(renewed, held, 'the held copy itself');
  t.same([held.requestTime, held.cachedAt, held.staleAt, held.deleteAt], [5_000, 5_002, 5_002, 20_000], 'with the times of the 304');
  t.equal(s.peek(k('/m'), ''), held, 'found as before');
  t.equal(s.stats().bytes, bytes, 'counting the same bytes');
  const changed = s.freshen(k('/m'), '', { headers: { ...fields, 'x-new': '1' }, requestTime: 6_000, cachedAt: 6_001, staleAt: 6_001, deleteAt: 21_000, invalidated: 0 }, nm);
  t.not(changed, held, 'a new field: a new copy');
  t.equal(s.peek(k('/m'), ''), changed, 'which the store holds now');
  t.same([held.cachedAt, changed!.cachedAt, changed!.headers['x-new']], [5_002, 6_001, '1'], 'the old copy as it was, the new one with the 304\'s');
  t.equal((await readAll(changed!.openBody())).toString(), 'kept body');
});
