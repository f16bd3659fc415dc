import t from 'tap';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DiskStore } from '../../lib/cache/disk-store.js';
import { readAll } from './store-contract.js';
import { runChild, runChildToEnd } from './fixtures/spawn.js';
import { churnBody, openDisk, tempDir } from './fixtures/helpers.js';

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

t.test('a writer killed in the middle of a large body leaves no row and its temp file is cleaned at the next open', async (t) => {
  const dir = tempDir(t);
  const child = runChild(['crash', dir]);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  const killed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(false); }, 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('WRITING')) { clearTimeout(timer); child.kill('SIGKILL'); resolve(true); }
    });
    child.once('exit', () => { clearTimeout(timer); resolve(false); });
  });
  t.ok(killed, `the child was killed mid-write ${err.slice(0, 500)}`);
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
  const temps = readdirSync(join(dir, 'tmp'));
  t.equal(temps.length, 1, 'the partial body is left as a temp file');
  const s = new DiskStore({ disks: [{ path: dir, quota: 1 << 30 }] });
  t.teardown(() => s.close());
  t.same(readdirSync(join(dir, 'tmp')), [], 'opening the store removed the orphaned temp file');
  t.equal(await s.get(k('/partial'), ''), undefined, 'no row for the partial body');
  t.equal((await readAll((await s.get(k('/complete'), ''))!.openBody())).toString(), 'a complete body',
    'the complete entry written before survives');
  t.equal(s.diskStatus()[0]!.used, 15, 'usage counts only the complete entry');
});

t.test('a writer killed while storing many small bodies leaves only complete bodies behind its rows', async (t) => {
  const dir = tempDir(t);
  const child = runChild(['churn', dir]);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  const killed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(false); }, 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (!d.toString().includes('STORED')) return;
      clearTimeout(timer);
      // Somewhere in the middle of later batches: bodies being written, rows not yet committed.
      setTimeout(() => { child.kill('SIGKILL'); resolve(true); }, 20 + Math.floor(Math.random() * 40));
    });
    child.once('exit', () => { clearTimeout(timer); resolve(false); });
  });
  t.ok(killed, `the child was killed while writing ${err.slice(0, 500)}`);
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
  const s = openDisk(t, { disks: [{ path: dir, quota: 1 << 30 }] });
  const rows = s.listByPrefix('shared.example', '/churn/', 100_000);
  t.ok(rows.length >= 300, `${rows.length} rows committed before the kill`);
  let exact = 0;
  for (const r of rows) {
    const n = Number(r.key.url.slice('/churn/'.length));
    const got = await readAll((await s.get(r.key, ''))!.openBody());
    if (got.equals(churnBody(n)) && r.size === got.length) exact++;
  }
  t.equal(exact, rows.length, 'every row names a complete, byte-exact body');
  t.equal(s.diskStatus()[0]!.used, rows.reduce((n, r) => n + r.size, 0), 'the usage counter matches the rows');
});
