// The disk directory (lib/cache/disk/directory.ts): a request for a URL the index has no row of
// is answered "miss" without a query, and rows of other processes become visible to requests.
import t from 'tap';
import { UrlDirectory } from '../../lib/cache/disk/directory.js';
import { metaOf, store } from './store-contract.js';
import { openDisk, tempDir } from './fixtures/helpers.js';

const k = (url: string) => ({ vhost: 'dir.example', url });

/** Polls `cond` every 10 ms for up to `ms`; true when it held. */
async function eventually(cond: () => boolean, ms = 30_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return cond();
}

t.test('the filter says "maybe" for every URL added and "no" for nearly every other one', async (t) => {
  const d = UrlDirectory.create(10_000);
  for (let i = 0; i < 10_000; i++) d.add('h', `/obj/${i}`);
  let lost = 0;
  for (let i = 0; i < 10_000; i++) if (!d.mayHave('h', `/obj/${i}`)) lost++;
  t.equal(lost, 0, 'no added URL is ever said to be absent');
  let maybe = 0;
  for (let i = 0; i < 10_000; i++) if (d.mayHave('h', `/other/${i}`)) maybe++;
  t.ok(maybe < 200, `absent URLs answer "maybe" rarely (${maybe} of 10000)`);
  t.notOk(d.mayHave('other-host', '/obj/1'), 'the host is part of the key');
  t.ok(new UrlDirectory(d.buffer).mayHave('h', '/obj/7'), 'another view of the shared buffer (the other thread) sees the same bits');
});

t.test('once the directory is built, a request for a URL never stored asks the index nothing', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 50_000_000 }] });
  await store(s, metaOf(k('/there')), 'body');
  let queries = 0;
  const rowsOfUrl = s.index.rowsOfUrl.bind(s.index);
  s.index.rowsOfUrl = (vhost, url) => { queries++; return rowsOfUrl(vhost, url); };
  // The writer thread hands the filter over shortly after it starts (slower under the test loader).
  t.ok(await eventually(() => { queries = 0; s.candidates(k('/never')); return queries === 0; }), 'the directory is in use');
  let found = 0;
  for (let i = 0; i < 100; i++) found += s.candidates(k(`/never/${i}`)).length;
  t.equal(found, 0, 'none of them is found');
  t.equal(queries, 0, '100 misses, no index query');
  t.same(s.candidates(k('/there')).map((m) => m.key.url), ['/there'], 'a stored URL is still found');
  t.ok(queries > 0, 'through the index');
});

t.test('an entry another process stores becomes a candidate of this one within a poll or two', async (t) => {
  const dir = tempDir(t);
  const here = openDisk(t, { disks: [{ path: dir, quota: 50_000_000 }] });
  const there = openDisk(t, { disks: [{ path: dir, quota: 50_000_000 }] });
  // Both directories built and in use before the other store writes.
  let queries = 0;
  const rowsOfUrl = here.index.rowsOfUrl.bind(here.index);
  here.index.rowsOfUrl = (vhost, url) => { queries++; return rowsOfUrl(vhost, url); };
  t.ok(await eventually(() => { queries = 0; here.candidates(k('/probe')); return queries === 0; }), 'this store reads its directory');
  for (let i = 0; i < 20; i++) await store(there, metaOf(k(`/from-there/${i}`)), `body ${i}`);
  t.ok(await eventually(() => here.candidates(k('/from-there/19')).length === 1), 'the last one is found here');
  let found = 0;
  for (let i = 0; i < 20; i++) found += here.candidates(k(`/from-there/${i}`)).length;
  t.equal(found, 20, 'and so is every one before it');
});
