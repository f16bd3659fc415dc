// The behaviour every CacheStore promises (lib/cache/store.ts), run against each implementation.
import type { Readable, Writable } from 'node:stream';
import type { Test } from 'tap';
import type { CacheEntryMeta, CacheKey, CacheStore, NotModified } from '../../lib/cache/store.js';
import { defaultPolicyOptions, notModifiedPatch } from '../../lib/cache/policy/index.js';

type Tap = Test;

const NOW = 1_700_000_000_000;

export function metaOf(key: CacheKey, variantKey = '', over: Partial<CacheEntryMeta> = {}): CacheEntryMeta {
  return {
    key, variantKey, vary: variantKey === '' ? [] : ['accept-encoding'], status: 200,
    headers: { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], etag: '"v1"' },
    requestTime: NOW - 5, cachedAt: NOW, staleAt: NOW + 60_000, deleteAt: NOW + 3_600_000, size: 0,
    ...over,
  };
}

export async function readAll(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

export function finished(w: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    w.once('finish', resolve);
    w.once('error', reject);
  });
}

export async function store(s: CacheStore, meta: CacheEntryMeta, body: Buffer | string): Promise<void> {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const w = s.createWriteStream({ ...meta, size: buf.length });
  const done = finished(w);
  // Several chunks, as an origin body arrives.
  const step = Math.max(1, Math.ceil(buf.length / 3));
  for (let i = 0; i < buf.length; i += step) w.write(buf.subarray(i, i + step));
  w.end();
  await done;
}

/**
 * A time after every change made so far (rows carry the time of their last change, and a 304
 * counts only for a copy unchanged since its request was sent): waits for the clock to move on.
 */
export async function laterThanNow(): Promise<number> {
  const now = Date.now();
  for (let i = 0; i < 100 && Date.now() <= now; i++) await new Promise((r) => setTimeout(r, 1));
  return Date.now();
}

/** Keys of the contract's behaviours: unique in the file. */
let n = 0;

/**
 * One store for the whole contract (`makeStore` gets the file's test, so the store lives until the
 * file ends): opening a disk store starts its writer thread, which costs about a second under the
 * test loader. Each behaviour gets a key of its own (`fresh`, unique in the file), so none sees
 * another's entries, also when two contracts run on stores that share a disk.
 */
export function runStoreContract(t: Tap, name: string, makeStore: (t: Tap) => Promise<CacheStore>): void {
  let shared: Promise<CacheStore> | undefined;
  const fresh = async (): Promise<{ s: CacheStore; key: CacheKey }> =>
    ({ s: await (shared ??= makeStore(t)), key: { vhost: `c${++n}.a.example`, url: '/dir/file.txt?x=1' } });

  void t.test(`${name}: a stored response reads back with the same status, headers, times and body`, async (t) => {
    const { s, key } = await fresh();
    const meta = metaOf(key, '', { status: 203, invalidated: 0 });
    await store(s, meta, 'hello, cache');
    const got = await s.get(key, '');
    t.ok(got, 'the entry is found');
    t.equal(got!.status, 203);
    t.same(got!.headers, meta.headers);
    t.same(got!.key, key);
    t.same(got!.vary, []);
    t.equal(got!.requestTime, meta.requestTime);
    t.equal(got!.cachedAt, meta.cachedAt);
    t.equal(got!.staleAt, meta.staleAt);
    t.equal(got!.deleteAt, meta.deleteAt);
    t.equal(got!.size, 12);
    t.equal((await readAll(got!.openBody())).toString(), 'hello, cache');
    if (got!.body !== undefined) t.equal(got!.body.toString(), 'hello, cache', 'the in-memory body is the whole body');
  });

  void t.test(`${name}: a miss is undefined and an empty list, not an error`, async (t) => {
    const { s } = await fresh();
    t.equal(await s.get({ vhost: 'none', url: '/x' }, ''), undefined);
    t.same(await s.variants({ vhost: 'none', url: '/x' }), []);
    t.same(s.candidates({ vhost: 'none', url: '/x' }), [], 'a request finds no candidate, synchronously');
    t.equal(await s.delete({ vhost: 'none', url: '/x' }), 0);
    t.equal(await s.updateMeta({ vhost: 'none', url: '/x' }, '', { staleAt: 1 }), false);
  });

  void t.test(`${name}: every variant of a URL is listed, newest first, and each reads back its own body`, async (t) => {
    const { s, key } = await fresh();
    await store(s, metaOf(key, 'gzip', { cachedAt: NOW + 1 }), 'gz');
    await store(s, metaOf(key, 'br', { cachedAt: NOW + 3 }), 'br');
    await store(s, metaOf(key, 'identity', { cachedAt: NOW + 2 }), 'plain');
    const list = await s.variants(key);
    t.same(list.map((m) => m.variantKey), ['br', 'identity', 'gzip']);
    t.same(list[0]!.vary, ['accept-encoding']);
    t.same(s.candidates(key).map((m) => m.variantKey), ['br', 'identity', 'gzip'], 'a request finds what this process stored');
    for (const [vk, body] of [['gzip', 'gz'], ['br', 'br'], ['identity', 'plain']] as const) {
      t.equal((await readAll((await s.get(key, vk))!.openBody())).toString(), body, `variant ${vk}`);
    }
    t.equal(await s.get(key, 'deflate'), undefined, 'an unknown variant is a miss');
  });

  void t.test(`${name}: a destroyed write stream leaves no entry`, async (t) => {
    const { s, key } = await fresh();
    const w = s.createWriteStream(metaOf(key, '', { size: 100 }));
    w.on('error', () => undefined);
    await new Promise((r) => w.write(Buffer.alloc(50, 1), r)); // the store has taken the first part
    w.destroy(new Error('origin went away'));
    await new Promise((r) => w.once('close', r));
    // An entry stored after it: by then the store has handled the destroyed stream.
    await store(s, metaOf({ vhost: key.vhost, url: `${key.url}-after` }), 'later');
    t.equal(await s.get(key, ''), undefined);
    t.same(await s.variants(key), []);
  });

  void t.test(`${name}: an entry is invisible until its stream finishes`, async (t) => {
    const { s, key } = await fresh();
    const w = s.createWriteStream(metaOf(key, '', { size: 6 }));
    const done = finished(w);
    await new Promise((r) => w.write('abc', r)); // the store has taken the first part
    t.equal(await s.get(key, ''), undefined, 'not visible mid-write');
    w.end('def');
    await done;
    t.equal((await readAll((await s.get(key, ''))!.openBody())).toString(), 'abcdef');
  });

  void t.test(`${name}: storing the same key and variant again replaces the entry`, async (t) => {
    const { s, key } = await fresh();
    await store(s, metaOf(key, 'gzip'), 'old body');
    await store(s, metaOf(key, 'gzip', { status: 404, headers: { etag: '"v2"' }, cachedAt: NOW + 10 }), 'new');
    const got = await s.get(key, 'gzip');
    t.equal(got!.status, 404);
    t.same(got!.headers, { etag: '"v2"' });
    t.equal((await readAll(got!.openBody())).toString(), 'new');
    t.equal((await s.variants(key)).length, 1, 'still one variant');
  });

  void t.test(`${name}: updateMeta replaces headers and times and keeps the body`, async (t) => {
    const { s, key } = await fresh();
    await store(s, metaOf(key), 'body stays');
    t.equal(await s.updateMeta(key, '', { headers: { etag: '"v9"' }, staleAt: NOW + 999, cachedAt: NOW + 5, invalidated: 1 }), true);
    const got = await s.get(key, '');
    t.same(got!.headers, { etag: '"v9"' });
    t.equal(got!.staleAt, NOW + 999);
    t.equal(got!.cachedAt, NOW + 5);
    t.equal(got!.invalidated, 1);
    t.equal(got!.deleteAt, NOW + 3_600_000, 'fields not patched are kept');
    t.equal((await readAll(got!.openBody())).toString(), 'body stays');
  });

  void t.test(`${name}: a 304 freshens the variant it answered and every other one with its strong ETag, none with another ETag`, async (t) => {
    const { s, key } = await fresh();
    const stale = (etag: string) => ({ headers: { etag, 'cache-control': 'max-age=60' }, requestTime: NOW - 2001, cachedAt: NOW - 2000, staleAt: NOW - 1000 });
    // Bodies of some length: a tiered store with a small memory limit keeps them on disk only.
    await store(s, metaOf(key, 'gzip', stale('"v1"')), 'answered variant');
    await store(s, metaOf(key, 'br', stale('"v1"')), 'same strong etag');
    await store(s, metaOf(key, 'zstd', stale('"v2"')), 'another etag, stale');
    const sent = await laterThanNow();
    const nm: NotModified = { headers: { etag: '"v1"', 'x-from-304': 'yes' }, requestTime: sent, receivedAt: sent + 5, policy: defaultPolicyOptions };
    const answered = (await s.get(key, 'gzip'))!;
    s.freshen(key, 'gzip', notModifiedPatch(answered, nm.headers, nm.requestTime, nm.receivedAt, nm.policy), nm);
    await s.freshened();
    for (const v of ['gzip', 'br']) {
      const got = (await s.get(key, v))!;
      t.equal(got.headers['x-from-304'], 'yes', `${v}: the 304's fields`);
      t.equal(got.cachedAt, sent + 5, `${v}: received with the 304`);
      t.ok(got.staleAt > sent + 59_000 && got.staleAt <= sent + 5 + 60_000, `${v}: fresh for its max-age from then`);
    }
    const other = (await s.get(key, 'zstd'))!;
    t.equal(other.headers['x-from-304'], undefined, 'the variant with another ETag keeps its fields');
    t.equal(other.staleAt, NOW - 1000, 'and stays stale');
    t.equal((await readAll(other.openBody())).toString(), 'another etag, stale');
  });

  void t.test(`${name}: delete removes one variant or all of them`, async (t) => {
    const { s, key } = await fresh();
    await store(s, metaOf(key, 'gzip'), 'a');
    await store(s, metaOf(key, 'br'), 'b');
    await store(s, metaOf(key, 'identity'), 'c');
    t.equal(await s.delete(key, 'br'), 1);
    t.equal(await s.get(key, 'br'), undefined);
    t.ok(await s.get(key, 'gzip'), 'the other variants remain');
    t.equal(await s.delete(key), 2);
    t.same(await s.variants(key), []);
  });

  void t.test(`${name}: openBody reads inclusive byte ranges`, async (t) => {
    const { s, key } = await fresh();
    const body = Buffer.from('0123456789abcdefghij');
    await store(s, metaOf(key), body);
    const got = (await s.get(key, ''))!;
    t.equal((await readAll(got.openBody(0, 0))).toString(), '0');
    t.equal((await readAll(got.openBody(5, 9))).toString(), '56789');
    t.equal((await readAll(got.openBody(15))).toString(), 'fghij', 'open-ended range runs to the end');
    t.equal((await readAll(got.openBody(19, 19))).toString(), 'j');
    t.equal((await readAll(got.openBody())).length, 20);
  });

  void t.test(`${name}: a binary body of several hundred kilobytes reads back byte for byte`, async (t) => {
    const { s, key } = await fresh();
    const body = Buffer.alloc(300_000);
    for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
    await store(s, metaOf(key), body);
    t.ok((await readAll((await s.get(key, ''))!.openBody())).equals(body));
  });
}
