// Writers of the shared cache directory killed in the middle of their writes (another worker
// process of the node, test/cache/fixtures/disk-child.ts): what the next open finds. Split from
// disk-processes.test.ts so that tap runs the two files side by side.
import t from 'tap';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DiskStore } from '../../lib/cache/disk-store.js';
import { readAll } from './store-contract.js';
import { runChild } from './fixtures/spawn.js';
import { churnBody, openDisk, tempDir } from './fixtures/helpers.js';

const k = (url: string) => ({ vhost: 'shared.example', url });

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
