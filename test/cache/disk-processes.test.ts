// Several processes on one cache directory: concurrent writers share the SQLite index without
// SQLITE_BUSY. Writers killed mid-write are in disk-processes-kill.test.ts, so that tap runs the
// two files side by side (each child process loads the test loader: seconds under load).
import t from 'tap';
import { readAll } from './store-contract.js';
import { runChildToEnd } from './fixtures/spawn.js';
import { openDisk, tempDir } from './fixtures/helpers.js';

const k = (url: string) => ({ vhost: 'shared.example', url });

t.test('four processes writing 200 entries each at once never hit SQLITE_BUSY and every entry is there', async (t) => {
  const dir = tempDir(t);
  // Open first, so this process also shows that an open index sees other processes' rows.
  const s = openDisk(t, { disks: [{ path: dir, quota: 1 << 30 }] });
  const runs = await Promise.all([0, 1, 2, 3].map((id) => runChildToEnd(['many', dir, String(id), '200'], 120_000)));
  for (const [id, r] of runs.entries()) {
    t.equal(r.code, 0, `writer ${id} exited cleanly ${r.err.slice(0, 500)}`);
    const report = JSON.parse(r.out.trim().split('\n').pop() ?? '{}') as { stored?: number; errors?: string[] };
    t.equal(report.stored, 200, `writer ${id} stored all its entries`);
    t.same(report.errors, [], `writer ${id} saw no error (no SQLITE_BUSY)`);
  }
  let missing = 0;
  for (let id = 0; id < 4; id++) {
    for (let i = 0; i < 200; i++) {
      const got = await s.get(k(`/w${id}/${i}`), '');
      if (got === undefined) { missing++; continue; }
      if (i % 50 === 0) t.equal((await readAll(got.openBody())).toString(), `body of ${id}/${i}`);
    }
  }
  t.equal(missing, 0, 'all 800 entries are hits in this process');
  t.equal(s.diskStatus()[0]!.used, s.listByPrefix('shared.example', '/', 10_000).reduce((n, r) => n + r.size, 0),
    'the shared usage counter matches the rows');
});
