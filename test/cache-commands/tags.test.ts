// Cache tags in process: how an origin's tag fields are read, which operator tags are refused,
// and a purge by tag against the real stores (SQLite index with its entry_tags table, memory
// tier), 100,000 tagged rows included.
import t from 'tap';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { runInvalidation } from '../../lib/cache/commands/invalidate.js';
import { tagTargets } from '../../lib/cache/commands/targets.js';
import { IndexDb, type NewRow, type Released } from '../../lib/cache/index-db.js';
import { SCHEMA } from '../../lib/cache/index-schema.js';
import { MAX_TAG_BYTES, MAX_TAGS_PER_CALL, MAX_TAGS_PER_OBJECT, responseTags, tagProblem, takeTags } from '../../lib/cache/tags.js';
import { TieredStore } from '../../lib/cache/tiered-store.js';
import { metaOf, store } from '../cache/store-contract.js';
import { openDisk, tempDir } from '../cache/fixtures/helpers.js';

const V = 'tags.example';
const k = (url: string) => ({ vhost: V, url });

function open(t: { teardown(fn: () => unknown): void }): TieredStore {
  const disk = openDisk(t, { disks: [{ path: tempDir(t), quota: 1e12 }], sweepIntervalMs: 0 });
  return new TieredStore({ memory: { maxBytes: 1_000_000, maxObjectBytes: 100_000 }, disk });
}

function row(url: string, tags: string, now: number): NewRow {
  return {
    vhost: V, url, variant: '', vary: '[]', status: 200, headers: '{}', request_time: now, cached_at: now, stale_at: now + 3_600_000,
    delete_at: now + 7_200_000, created_at: now, updated_at: now, size: 100, disk: 0, fid: url, path: `/nonexistent${url}`,
    last_access: now, invalidated: 0, flags: 0, hash_key: '', tags,
  };
}

t.test('an origin tags a response in Surrogate-Key and Cache-Tag, separated by spaces or commas, each tag once', async (t) => {
  t.same(responseTags({ 'surrogate-key': 'a b  c', 'cache-tag': 'c,d, e' }, ['surrogate-key', 'cache-tag']), ['a', 'b', 'c', 'd', 'e']);
  t.same(responseTags({ 'x-other': 'a' }, ['surrogate-key']), []);
  const many = Array.from({ length: MAX_TAGS_PER_OBJECT + 5 }, (_, i) => `t${i}`).join(' ');
  t.equal(responseTags({ 'cache-tag': many }, ['cache-tag']).length, MAX_TAGS_PER_OBJECT, 'tags past the bound are dropped');
  t.same(responseTags({ 'cache-tag': `ok ${'x'.repeat(MAX_TAG_BYTES + 1)}` }, ['cache-tag']), ['ok'], 'an over-long tag is dropped');
  const headers: Record<string, string> = { 'cache-tag': 'p1', 'content-type': 'text/plain' };
  t.same(takeTags(headers, { fields: ['cache-tag'], strip: true }), ['p1']);
  t.same(headers, { 'content-type': 'text/plain' }, 'stripped: the client never sees the field');
  const kept: Record<string, string> = { 'cache-tag': 'p1' };
  takeTags(kept, { fields: ['cache-tag'], strip: false });
  t.same(kept, { 'cache-tag': 'p1' }, 'strip false keeps it');
});

t.test('an empty tag, an over-long tag and too many tags are refused with the reason', async (t) => {
  t.equal(tagProblem(['a', 'b']), undefined);
  t.equal(tagProblem([]), 'tag is empty');
  t.equal(tagProblem(['']), 'tag is empty');
  t.match(tagProblem(['x'.repeat(MAX_TAG_BYTES + 1)]), `tag longer than ${MAX_TAG_BYTES} bytes`);
  t.match(tagProblem(Array.from({ length: MAX_TAGS_PER_CALL + 1 }, (_, i) => `t${i}`)), `more than ${MAX_TAGS_PER_CALL} in one call`);
  t.match(tagProblem(['caf\u00e9']), 'visible ASCII');
});

t.test('a purge by tag marks every copy of that tag, memory copies included, and no other', async (t) => {
  const s = open(t);
  await store(s, { ...metaOf(k('/a'), ''), tags: ['p1', 'all'] }, 'aaaa');
  await store(s, { ...metaOf(k('/b'), ''), tags: ['p2', 'all'] }, 'bbbbbb');
  await store(s, { ...metaOf(k('/c'), ''), tags: ['p1'] }, 'cc');
  t.ok(s.memory.variantsSync(k('/a')).length > 0, 'a memory copy is there before');
  const r = await runInvalidation(s, 'purge', tagTargets(['p1'], [V]));
  t.same([r.Count, r.Size], [2, 6], 'objects and bytes counted as a URL purge counts them');
  t.same(s.memory.variantsSync(k('/a')), [], 'the memory copy went');
  const state = (url: string) => s.disk.listByPrefix(V, url)[0]!.invalidated;
  t.same([state('/a'), state('/b'), state('/c')], [1, 0, 1]);
  t.equal((await runInvalidation(s, 'purge', tagTargets(['p1'], [V]))).Count, 0, 'purged already: not counted again');
  t.equal((await runInvalidation(s, 'expire', tagTargets(['all'], [V]))).Count, 2);
  t.equal((await runInvalidation(s, 'purge', tagTargets(['p1'], ['other.example']))).Count, 0, 'a tag is scoped to its host');
});

t.test('a replaced or removed row takes its tags with it', async (t) => {
  const s = open(t);
  const now = Date.now();
  const released: Released = { paths: [] };
  s.disk.index.batch(() => s.disk.index.insertRow(row('/r', 'old', now), 1e12, released));
  s.disk.index.batch(() => s.disk.index.insertRow(row('/r', 'new', now), 1e12, released));
  t.equal(s.disk.index.tagPage(V, 'old', 0, 10).length, 0, 'the replaced row is no longer under its old tag');
  t.equal(s.disk.index.tagPage(V, 'new', 0, 10).length, 1);
  await s.disk.delete(k('/r'));
  const left = s.disk.index.db.prepare('SELECT COUNT(*) FROM entry_tags').pluck().get();
  t.equal(left, 0, 'deleting the row deleted its tags');
});

t.test('an index made before tags gains the tags column and table when opened', async (t) => {
  const file = join(tempDir(t), 'old.sqlite');
  const old = new Database(file);
  old.exec(SCHEMA.replace(",\n  tags TEXT NOT NULL DEFAULT ''", '').replace(/CREATE TABLE IF NOT EXISTS entry_tags[^;]*;\nCREATE INDEX IF NOT EXISTS entry_tags_entry[^;]*;/, ''));
  old.close();
  const db = new IndexDb(file);
  t.teardown(() => db.close());
  db.batch(() => db.insertRow(row('/x', 'p1', Date.now()), 1e12, { paths: [] }));
  t.equal(db.tagPage(V, 'p1', 0, 10).length, 1);
});

t.test('a tag purge of 100,000 objects marks every one of them and nothing else', async (t) => {
  const s = open(t);
  const now = Date.now();
  // Rows made by SQLite itself (a JavaScript insert per row would take most of the test's time),
  // tagged as insertRow tags them: the row's tags column and one entry_tags row per tag.
  const db = s.disk.index.db;
  const fill = (prefix: string, n: number, tag: string): void => {
    db.prepare(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${n - 1})
      INSERT INTO entries (vhost, url, variant, vary, status, headers, request_time, cached_at, stale_at, delete_at, created_at, updated_at,
        size, disk, fid, path, last_access, invalidated, flags, hash_key, tags)
      SELECT @v, @p || i, '', '[]', 200, '{}', @now, @now, @now + 3600000, @now + 7200000, @now, @now, 100, 0, @p || i, '/nonexistent' || i, @now, 0, 0, '', @tag FROM n`)
      .run({ v: V, p: prefix, now, tag });
    db.prepare(`INSERT INTO entry_tags (vhost, tag, entry_id) SELECT vhost, @tag, id FROM entries WHERE vhost = @v AND url >= @p AND url < @p || '~'`).run({ v: V, p: prefix, tag });
  };
  s.disk.index.batch(() => { fill('/p/', 100_000, 'product-7'); fill('/q/', 1000, 'product-8'); });
  const started = performance.now();
  const r = await runInvalidation(s, 'purge', tagTargets(['product-7'], [V]));
  const ms = performance.now() - started;
  t.comment(`tag purge of 100,000 objects: ${ms.toFixed(0)} ms`);
  t.same([r.Count, r.Size], [100_000, 100_000 * 100]);
  const purged = s.disk.index.db.prepare('SELECT COUNT(*) FROM entries WHERE invalidated = 1').pluck().get();
  t.equal(purged, 100_000);
  const untouched = s.disk.index.db.prepare("SELECT COUNT(*) FROM entries WHERE invalidated = 0 AND url LIKE '/q/%'").pluck().get();
  t.equal(untouched, 1000, 'the other tag is left alone');
});
