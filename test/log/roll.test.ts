// The roller alone, on its own clock: file names by period and size, gzip at roll, retention,
// and a restart that continues the current file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { RollingFile, type RollOptions } from '../../lib/log/roll.js';

const T0 = Date.UTC(2026, 10, 24, 9, 58, 30);

function setup(t: { teardown(fn: () => void): void }, o: Partial<RollOptions>): { dir: string; clock: { ms: number }; file: () => RollingFile } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-roll-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const clock = { ms: T0 };
  return { dir, clock, file: () => new RollingFile({ dir, base: 'access', retention: 10, compression: false, now: () => clock.ms, ...o }) };
}

const ls = (dir: string): string[] => fs.readdirSync(dir).sort();

t.test('rolling by time starts a file at each multiple of the period on the clock', async (t) => {
  const { dir, clock, file } = setup(t, { timeMinutes: 10, header: '#Fields: a b\n' });
  const f = file();
  f.write('one\n');
  await f.flush();
  clock.ms = Date.UTC(2026, 10, 24, 10, 0, 1);
  await f.tick();
  f.write('two\n');
  await f.close();
  t.same(ls(dir), ['access_20261124_0950.log', 'access_20261124_1000.log']);
  t.equal(fs.readFileSync(path.join(dir, 'access_20261124_0950.log'), 'utf8'), '#Fields: a b\none\n');
  t.equal(fs.readFileSync(path.join(dir, 'access_20261124_1000.log'), 'utf8'), '#Fields: a b\ntwo\n', 'the header starts every file');
});

t.test('a daily period rolls at 00:00', async (t) => {
  const { dir, clock, file } = setup(t, { timeMinutes: 1440 });
  const f = file();
  f.write('a\n');
  await f.flush();
  clock.ms = Date.UTC(2026, 10, 25, 0, 0, 0);
  f.write('b\n');
  await f.close();
  t.same(ls(dir), ['access_20261124_0000.log', 'access_20261125_0000.log']);
});

t.test('rolling by size names files with seconds and never crosses the size', async (t) => {
  const { dir, clock, file } = setup(t, { sizeBytes: 100 });
  const f = file();
  const line = `${'x'.repeat(39)}\n`;
  for (let i = 0; i < 5; i++) {
    f.write(line);
    await f.flush();
    clock.ms += 1000;
  }
  await f.close();
  const files = ls(dir);
  t.same(files, ['access_20261124_095830.log', 'access_20261124_095832.log', 'access_20261124_095834.log']);
  t.same(files.map((n) => fs.statSync(path.join(dir, n)).size), [80, 80, 40]);
});

t.test('with both, whichever comes first rolls', async (t) => {
  const { dir, clock, file } = setup(t, { sizeBytes: 1000, timeMinutes: 60 });
  const f = file();
  f.write('a\n');
  await f.flush();
  clock.ms = Date.UTC(2026, 10, 24, 10, 0, 5);
  f.write('b\n');
  await f.close();
  t.same(ls(dir), ['access_20261124_095830.log', 'access_20261124_100005.log']);
});

t.test('compression gzips the rolled file and retention keeps that many files', async (t) => {
  const { dir, clock, file } = setup(t, { timeMinutes: 1, compression: true, retention: 3 });
  const f = file();
  for (let i = 0; i < 5; i++) {
    f.write(`line ${i}\n`);
    await f.flush();
    clock.ms += 60_000;
  }
  await f.close();
  t.same(ls(dir), ['access_20261124_1000.log.gz', 'access_20261124_1001.log.gz', 'access_20261124_1002.log']);
  t.equal(gunzipSync(fs.readFileSync(path.join(dir, 'access_20261124_1001.log.gz'))).toString(), 'line 3\n');
});

t.test('a restart continues the current file and finishes what a crash left', async (t) => {
  const { dir, file } = setup(t, { timeMinutes: 10, compression: true, header: '#H\n' });
  // What a crash in the middle of a roll leaves: an older .log and a half-written gzip.
  fs.writeFileSync(path.join(dir, 'access_20261124_0940.log'), 'old\n');
  fs.writeFileSync(path.join(dir, 'access_20261124_0940.log.gz.part'), 'half');
  fs.writeFileSync(path.join(dir, 'access_20261124_0950.log'), '#H\nbefore\n');
  const f = file();
  f.write('after\n');
  await f.close();
  t.same(ls(dir), ['access_20261124_0940.log.gz', 'access_20261124_0950.log']);
  t.equal(fs.readFileSync(path.join(dir, 'access_20261124_0950.log'), 'utf8'), '#H\nbefore\nafter\n', 'no second header');
  t.equal(gunzipSync(fs.readFileSync(path.join(dir, 'access_20261124_0940.log.gz'))).toString(), 'old\n');
});

t.test('an unwritable directory reports the error and the next write works again', async (t) => {
  const { dir } = setup(t, {});
  const errors: Error[] = [];
  const blocker = path.join(dir, 'blocked');
  fs.writeFileSync(blocker, 'a file where the directory should be');
  const f = new RollingFile({ dir: blocker, base: 'access', retention: 2, compression: false, onError: (e) => errors.push(e) });
  f.write('lost\n');
  await f.flush();
  t.ok(errors.length > 0, 'reported');
  fs.rmSync(blocker);
  f.write('kept\n');
  await f.close();
  t.equal(fs.readFileSync(path.join(blocker, 'access.log'), 'utf8'), 'kept\n');
});

t.test('a new file is named as current only once its header is in it', async (t) => {
  // Workers append to the file `current` names (another log's switch announces every route's
  // file), so a file named before its header was written could get a line above the header.
  const { dir, file } = setup(t, { header: '#Software: x\n#Fields: a b\n' });
  const f = file();
  f.write('one\n');
  const seen: string[] = [];
  let done = false;
  const flushed = f.flush().then(() => { done = true; });
  for (let i = 0; i < 10_000 && !done; i++) {
    const name = f.current;
    if (name !== undefined) seen.push(fs.existsSync(name) ? fs.readFileSync(name, 'utf8') : '(no file)');
    await new Promise((r) => setImmediate(r));
  }
  await flushed;
  t.ok(seen.length > 0 || f.current !== undefined, 'the file is named once open');
  for (const content of seen) t.ok(content.startsWith('#Software: x\n#Fields: a b\n'), `named with the header in it (found ${JSON.stringify(content)})`);
  t.equal(fs.readFileSync(path.join(dir, 'access.log'), 'utf8'), '#Software: x\n#Fields: a b\none\n');
  await f.close();
});
