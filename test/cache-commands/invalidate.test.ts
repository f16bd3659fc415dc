// The invalidation commands against the real stores (memory tier + SQLite index + body files),
// where the timing of the disk sweep can be driven directly.
import t from 'tap';
import { existsSync } from 'node:fs';
import { runInvalidation } from '../../lib/cache/commands/invalidate.js';
import { fileRecord } from '../../lib/cache/commands/fileinfo.js';
import { parseTargets } from '../../lib/cache/commands/targets.js';
import { TieredStore } from '../../lib/cache/tiered-store.js';
import { metaOf, store } from '../cache/store-contract.js';
import { openDisk, tempDir } from '../cache/fixtures/helpers.js';

const V = 'd.example';
const k = (url: string) => ({ vhost: V, url });
const targets = (url: string) => parseTargets(url, (n) => (n === V ? V : undefined), V);

function open(t: { teardown(fn: () => unknown): void }): TieredStore {
  const disk = openDisk(t, { disks: [{ path: tempDir(t), quota: 10_000_000 }], sweepIntervalMs: 0 });
  return new TieredStore({ memory: { maxBytes: 1_000_000, maxObjectBytes: 100_000 }, disk });
}

/** A copy without validator that goes stale in 1 s and may be dropped right then. */
async function shortLived(s: TieredStore, url: string, now = Date.now()): Promise<void> {
  await store(s, metaOf(k(url), '', { headers: { 'content-type': 'text/plain' }, cachedAt: now, staleAt: now + 1000, deleteAt: now + 1000 }), 'body');
}

// One store for the file (opening one starts its disk writer thread, 1-5 s under the test
// loader); each behaviour works on URLs of its own. The expireafter test comes first: its sweeps
// count every expired row of the store.
const s = open(t);

t.test('expireafter keeps the object past its old deletion time, until the new expiry', async (t) => {
  const now = Date.now();
  await shortLived(s, '/keep'); await shortLived(s, '/control');
  const r = await runInvalidation(s, 'expireafter', targets(`${V}/keep`), { sec: 3600 });
  t.equal(r.Count, 1);
  t.equal(await s.disk.sweepExpired(now + 10 * 60_000), 1, 'ten minutes on, the sweep drops only the copy left alone');
  const [row] = s.disk.listByPrefix(V, '/keep');
  t.ok(row, 'the expireafter copy is still in the index');
  const left = (fileRecord(row!, { now: Date.now(), useOriginEncoding: false, smallFileMax: 0, downloaders: 0 })['TTL-Left'] as [string, number])[1];
  t.ok(left >= 3590 && left <= 3600, `TTL-Left ${left}`);
  t.ok(row!.deleteAt >= now + 3600_000, 'deleteAt moved with the expiry');
  t.equal(await s.disk.sweepExpired(Date.now() + 3660_000), 1, 'and it goes once the new expiry has passed');
});

t.test('hardpurge leaves a body-less tombstone flagged HardPurge that is never served', async (t) => {
  await store(s, metaOf(k('/h'), '', { size: 0 }), 'x'.repeat(500));
  const before = s.disk.diskStatus()[0]!.used;
  const path = s.disk.listByPrefix(V, '/h')[0]!.path;
  t.equal((await runInvalidation(s, 'hardpurge', targets(`${V}/h`))).Count, 1);
  t.equal(await s.get(k('/h'), ''), undefined, 'a lookup misses');
  t.same(await s.variants(k('/h')), []);
  t.notOk(existsSync(path), 'the body file is gone');
  t.equal(s.disk.diskStatus()[0]!.used, before - 500, 'its bytes left the quota');
  const rec = fileRecord(s.disk.listByPrefix(V, '/h')[0]!, { now: Date.now(), useOriginEncoding: false, smallFileMax: 0, downloaders: 0 });
  t.match(rec, { HardPurge: 'Y', Purge: 'N', LocalFileExist: 'N', Deleted: 'Y', CachedSize: 0 });
  t.equal((await runInvalidation(s, 'hardpurge', targets(`${V}/h`))).Count, 0, 'not counted twice');
  t.equal((await runInvalidation(s, 'purge', targets(`${V}/h`))).Count, 0, 'nor purged or expired');
  await store(s, metaOf(k('/h')), 'new');
  t.ok(await s.get(k('/h'), ''), 'the next fetch replaces the tombstone');
  t.equal(s.disk.listByPrefix(V, '/h')[0]!.flags & 2, 0, 'HardPurge N again');
});

t.test('expire after purge keeps the object purged, so a 304 cannot bring the old copy back', async (t) => {
  await store(s, metaOf(k('/p')), 'old');
  await runInvalidation(s, 'purge', targets(`${V}/p`));
  t.equal((await runInvalidation(s, 'expire', targets(`${V}/p`))).Count, 1);
  t.equal(s.disk.listByPrefix(V, '/p')[0]!.invalidated, 1, 'still purged');
});

t.test('an exact target changes that URL only, not the URLs it is a prefix of', async (t) => {
  for (const u of ['/dir/', '/dir/x', '/dir/y']) await store(s, metaOf(k(u)), u);
  t.equal((await runInvalidation(s, 'purge', targets(`${V}/dir/`))).Count, 1);
  t.same(s.disk.listByPrefix(V, '/dir/').map((r) => [r.key.url, r.invalidated]), [['/dir/', 1], ['/dir/x', 0], ['/dir/y', 0]]);
});

t.test('a queued command leaves alone copies cached after it was queued', async (t) => {
  const queuedAt = Date.now();
  await store(s, metaOf(k('/q/old'), '', { cachedAt: queuedAt - 1000 }), 'old');
  await store(s, metaOf(k('/q/new'), '', { cachedAt: queuedAt + 5 }), 'new');
  const r = await runInvalidation(s, 'purge', targets(`${V}/q/*`), { before: queuedAt });
  t.equal(r.Count, 1);
  t.same(s.disk.listByPrefix(V, '/q/').map((x) => [x.key.url, x.invalidated]), [['/q/new', 0], ['/q/old', 1]]);
});

t.test('purge does nothing for a host whose every origin address is excluded', async (t) => {
  await store(s, metaOf(k('/x')), 'x');
  t.equal((await runInvalidation(s, 'purge', targets(`${V}/x`), { allExcluded: () => true })).Count, 0);
  t.equal(s.disk.listByPrefix(V, '/x')[0]!.invalidated, 0);
  t.equal((await runInvalidation(s, 'expire', targets(`${V}/x`), { allExcluded: () => true })).Count, 1, 'expire still works');
});

t.test('a subtree purge, expire and expireafter over more rows than one page act on exactly the subtree', async (t) => {
  const now = Date.now();
  // 5,003 objects under /tree/ (more than one 5,000-row page), one of them with two variants,
  // plus neighbours on both sides of the range that must stay untouched.
  const fresh = { size: 10, cachedAt: now - 1000, staleAt: now + 600_000, deleteAt: now + 600_000 };
  const metas = Array.from({ length: 5003 }, (_, i) => metaOf(k(`/tree/${String(i).padStart(5, '0')}`), '', fresh));
  metas.push(metaOf(k('/tree/00007'), 'gzip', fresh));
  for (const url of ['/tre', '/tree', '/tree0', '/trees/x']) metas.push(metaOf(k(url), '', fresh));
  // Stored 500 at a time straight into the disk store (the writer thread batches them).
  for (let i = 0; i < metas.length; i += 500) await Promise.all(metas.slice(i, i + 500).map((m) => store(s.disk, m, 'x'.repeat(10))));
  const purged = await runInvalidation(s, 'purge', targets(`${V}/tree/*`));
  t.same([purged.Count, purged.Size], [5004, 50040], 'every variant under /tree/ counted with its bytes');
  const rows = s.disk.listByPrefix(V, '/tre');
  const under = rows.filter((r) => r.key.url.startsWith('/tree/'));
  t.ok(under.every((r) => r.invalidated === 1 && (r.flags & 1) === 1), 'each is purged and flagged Purge');
  t.ok(rows.filter((r) => !r.key.url.startsWith('/tree/')).every((r) => r.invalidated === 0 && r.flags === 0), 'the neighbours are untouched');
  t.equal((await runInvalidation(s, 'purge', targets(`${V}/tree/*`))).Count, 0, 'an already purged subtree is not counted again');

  const expired = await runInvalidation(s, 'expire', targets(`${V}/tree/*`));
  t.equal(expired.Count, 5004);
  const after = s.disk.listByPrefix(V, '/tree/');
  t.ok(after.every((r) => r.invalidated === 1 && r.staleAt <= Date.now()), 'expired, and still purged (a 304 cannot restore them)');

  const later = await runInvalidation(s, 'expireafter', targets(`${V}/trees/*`), { sec: 7200 });
  t.equal(later.Count, 1);
  const [x] = s.disk.listByPrefix(V, '/trees/');
  t.ok(x!.staleAt >= now + 7_100_000 && x!.deleteAt >= x!.staleAt, 'expireafter moved expiry and deletion');
  t.equal(x!.invalidated, 0, 'and left the state alone');
});
