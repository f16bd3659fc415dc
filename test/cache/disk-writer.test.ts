// The disk store's writer thread: what a destroyed stream leaves, back-pressure towards it, and
// that closing (or exiting) waits for the writes already ended.
import t from 'tap';
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { DiskStore } from '../../lib/cache/disk-store.js';
import { finished, metaOf, readAll } from './store-contract.js';
import { runChildToEnd } from './fixtures/spawn.js';
import { openDisk, tempDir } from './fixtures/helpers.js';
import { waitFor } from '../helpers/wait.js';

const k = (url: string) => ({ vhost: 'w.example', url });

/** Body files of a cache directory: temp files and files in the fan-out directories. */
function bodyFiles(dir: string): { temps: string[]; finals: string[] } {
  const finals: string[] = [];
  for (const name of readdirSync(dir)) {
    const sub = join(dir, name);
    if (name === 'tmp' || !statSync(sub).isDirectory()) continue;
    for (const f of readdirSync(sub)) finals.push(join(sub, f));
  }
  return { temps: readdirSync(join(dir, 'tmp')), finals };
}

function pattern(seed: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) b.writeUInt32LE((i * 2654435761 + seed) >>> 0, i);
  return b;
}

const sha = (b: Buffer) => createHash('sha1').update(b).digest('hex');

t.test('a stream destroyed mid-body leaves no entry and no file', async (t) => {
  const dir = tempDir(t);
  const s = openDisk(t, { disks: [{ path: dir, quota: 1 << 30 }] });
  const w = s.createWriteStream(metaOf(k('/mid'), '', { size: 4 << 20 }));
  w.on('error', () => undefined);
  const chunk = Buffer.alloc(64 * 1024, 5);
  for (let i = 0; i < 16; i++) w.write(chunk);
  // Wait until the body is on its way to disk (a temp file exists), then give up on it.
  await waitFor(() => bodyFiles(dir).temps.length > 0, { timeoutMs: 15_000 });
  t.equal(bodyFiles(dir).temps.length, 1, 'the partial body was being written to a temp file');
  w.destroy(new Error('origin went away'));
  await new Promise((r) => w.once('close', r));
  t.equal(await s.get(k('/mid'), ''), undefined, 'no entry');
  t.same(bodyFiles(dir), { temps: [], finals: [] }, 'no temp file and no body file is left');
  t.equal(s.diskStatus()[0]!.used, 0);
});

t.test('a stream destroyed right after end() leaves no entry and no file', async (t) => {
  const dir = tempDir(t);
  const s = openDisk(t, { disks: [{ path: dir, quota: 1 << 30 }] });
  const w = s.createWriteStream(metaOf(k('/late'), '', { size: 5 }));
  w.on('error', () => undefined);
  w.end('whole');
  w.destroy();
  await new Promise((r) => w.once('close', r));
  // Closing waits for every write the writer thread was given: nothing of this one is pending.
  await s.close();
  t.same(bodyFiles(dir), { temps: [], finals: [] });
  const reopened = openDisk(t, { disks: [{ path: dir, quota: 1 << 30 }] });
  t.equal(await reopened.get(k('/late'), ''), undefined);
});

t.test('writing far more than the in-flight bound waits for the writer thread and keeps every byte', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 1 << 30 }], writerMaxInFlightBytes: 1 << 20 });
  const size = 12 << 20;
  const bodies = [1, 2, 3].map((seed) => pattern(seed, size));
  let refused = 0;
  const writeOne = async (url: string, body: Buffer): Promise<void> => {
    const w = s.createWriteStream(metaOf(k(url), '', { size }));
    const done = finished(w);
    for (let off = 0; off < size; off += 64 * 1024) {
      if (!w.write(body.subarray(off, off + 64 * 1024))) { refused++; await new Promise((r) => (w as Writable).once('drain', r)); }
    }
    w.end();
    await done;
  };
  await Promise.all(bodies.map((b, i) => writeOne(`/big/${i}`, b)));
  t.ok(refused > 0, `write() returned false ${refused} times while the thread caught up`);
  for (const [i, b] of bodies.entries()) {
    const got = await s.get(k(`/big/${i}`), '');
    t.equal(got?.size, size, `body ${i} has its full size`);
    t.equal(sha(await readAll(got!.openBody())), sha(b), `body ${i} is intact`);
  }
});

t.test('bodies sent in chunks at every offset within a word, through the ring and past its end, are stored byte for byte', async (t) => {
  const s = openDisk(t, { disks: [{ path: tempDir(t), quota: 1 << 30 }] });
  // 64 bodies of unknown length, below the thread's flush size each: their chunks sit in the
  // 8 MiB ring (copied out while a body is open), 12.8 MB in all. Every chunk
  // has an odd length and starts at a different offset within a word of its buffer.
  const size = 200_003;
  const bodies = Array.from({ length: 64 }, (_, i) => pattern(i + 7, size + 9).subarray(i % 8, i % 8 + size));
  const writeOne = async (url: string, body: Buffer, i: number): Promise<void> => {
    const w = s.createWriteStream(metaOf(k(url)));
    const done = finished(w);
    for (let off = 0, n = 0; off < size; n++) {
      const len = 3001 + ((i + n) % 13) * 2;
      if (!w.write(body.subarray(off, off + len))) await new Promise((r) => (w as Writable).once('drain', r));
      off += len;
      // A turn between chunks: they reach the thread in different messages.
      await new Promise((r) => setImmediate(r));
    }
    w.end();
    await done;
  };
  // In two waves: the first is settled (the thread has handed its ring bytes back) before the
  // second starts, whose chunks then go on from the ring's end to its start.
  for (const wave of [0, 32]) await Promise.all(bodies.slice(wave, wave + 32).map((b, i) => writeOne(`/odd/${wave + i}`, b, wave + i)));
  let intact = 0;
  for (const [i, b] of bodies.entries()) {
    const got = await s.get(k(`/odd/${i}`), '');
    if (got?.size === size && (await readAll(got.openBody())).equals(b)) intact++;
  }
  t.equal(intact, bodies.length, 'every body is stored whole and unchanged');
});

t.test('close() waits for every write already ended: all of them are stored', async (t) => {
  const dir = tempDir(t);
  const s = new DiskStore({ disks: [{ path: dir, quota: 1 << 30 }] });
  let finishedCount = 0;
  for (let i = 0; i < 50; i++) {
    const w = s.createWriteStream(metaOf(k(`/c/${i}`)));
    w.on('finish', () => finishedCount++);
    w.write(`body ${i} `);
    w.end(pattern(i, 3000));
  }
  await s.close();
  t.equal(finishedCount, 50, 'every stream finished before close() resolved');
  const again = openDisk(t, { disks: [{ path: dir, quota: 1 << 30 }] });
  let complete = 0;
  for (let i = 0; i < 50; i++) {
    const got = await again.get(k(`/c/${i}`), '');
    if (got !== undefined && (await readAll(got.openBody())).equals(Buffer.concat([Buffer.from(`body ${i} `), pattern(i, 3000)]))) complete++;
  }
  t.equal(complete, 50, 'every entry is there, complete, after a restart');
  t.same(bodyFiles(dir).temps, [], 'no temp file is left');
});

t.test('a write stream of a closed store fails and stores nothing', async (t) => {
  const s = new DiskStore({ disks: [{ path: tempDir(t), quota: 1 << 20 }] });
  await s.close();
  const w = s.createWriteStream(metaOf(k('/after')));
  const err = await new Promise<Error>((resolve) => { w.once('error', resolve); w.end('x'); });
  t.match(err, { code: 'ECLOSED' });
});

t.test('a process that exits on its own after ending its writes (no close) has stored all of them', async (t) => {
  const dir = tempDir(t);
  const r = await runChildToEnd(['exit', dir, '7', '40'], 60_000);
  t.equal(r.code, 0, `the child exited cleanly ${r.err.slice(0, 500)}`);
  t.match(r.out, /ENDED/);
  const s = openDisk(t, { disks: [{ path: dir, quota: 1 << 30 }] });
  let ok = 0;
  for (let i = 0; i < 40; i++) {
    const got = await s.get({ vhost: 'shared.example', url: `/exit7/${i}` }, '');
    if (got !== undefined && (await readAll(got.openBody())).toString() === `exit body ${i}`) ok++;
  }
  t.equal(ok, 40, 'every entry is there with its body');
});
