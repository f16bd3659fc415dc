// Workers append their batches to the host log files themselves (lib/log/direct.ts) while the
// primary's hub opens, rolls and gzips them (lib/log/hub.ts, roll.ts). In process: two direct
// writers stand for two workers, the hub's announcement reaches them as the IPC message would.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { LogHub } from '../../lib/log/hub.js';
import { DirectFiles, type DirectReport, type LogFiles } from '../../lib/log/direct.js';
import { parseSetting } from '../../lib/setting-check/load.js';
import { until } from '../helpers/wait.js';

function fixture(t: Test, log: Record<string, unknown>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-direct-'));
  let clock = Date.UTC(2026, 10, 25, 10, 0, 30);
  const failures: string[] = [];
  const switched: Array<Map<number, () => void>> = [new Map(), new Map()];
  const answered = [0, 0];
  const writers = [0, 1].map((i) => new DirectFiles((m: DirectReport) => {
    if (m.type === 'log-file-error') { failures.push(m.file); return; }
    answered[i] = m.generation;
    switched[i]!.get(m.generation)?.();
  }));
  let generation = 0;
  const announced: LogFiles[] = [];
  /** While set, the announcement reaches the second writer only once it resolves (a slow worker). */
  let holdSecond: Promise<void> | undefined;
  const hub = new LogHub((file) => failures.push(file), () => clock, (files) => {
    announced.push(files);
    const g = ++generation;
    const held = holdSecond;
    return Promise.all(writers.map(async (w, i) => {
      if (i === 1 && held !== undefined) await held;
      await new Promise<void>((resolve) => {
        switched[i]!.set(g, resolve);
        w.update(files, g);
        if (answered[i]! >= g) resolve();
      });
    })).then(() => undefined);
  });
  hub.configure(parseSetting({
    env: { home: dir },
    functions: { operations: { log: { meta: { dir: 'logs' }, access: log } } },
    hosting: [{ name: 'a.test', origin: { address: ['127.0.0.1:9'] } }],
  }), dir);
  t.teardown(async () => { await hub.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  const hostDir = path.join(dir, 'logs', 'a.test');
  return {
    hub, writers, failures, announced, hostDir,
    hold: (p: Promise<void>) => { holdSecond = p; },
    setClock: (ms: number) => { clock = ms; },
    files: () => fs.readdirSync(hostDir).sort(),
    /** A batch of `n` lines from writer `w`, or false when it has no file to append to (it would ship them). */
    batch: (w: number, tag: string, n: number) => writers[w]!.write('access a.test', Buffer.from(Array.from({ length: n }, (_, i) => `${tag}-${i} ${'x'.repeat(40)}\n`).join(''))),
  };
}

t.test('a route has no direct file until the primary opened it at its first line; then every writer appends to it', async (t) => {
  const f = fixture(t, { enable: true });
  t.equal(f.batch(0, 'early', 1), false, 'no file yet: the batch goes to the primary');
  f.hub.write({ kind: 'access', host: 'a.test', text: 'shipped-0\n' });
  await f.hub.flush();
  t.same(Object.keys(f.announced.at(-1)!), ['access a.test'], 'the open file was announced');
  t.ok(f.batch(0, 'w0', 50) && f.batch(1, 'w1', 50), 'both writers append themselves');
  await Promise.all(f.writers.map((w) => w.settled()));
  const text = fs.readFileSync(path.join(f.hostDir, 'access.log'), 'utf8');
  const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  t.equal(lines.length, 101);
  t.ok(text.startsWith('#Software:'), 'the header the primary wrote comes first');
  t.same(f.failures, []);
});

t.test('a time roll moves every writer to the new file before the old one is gzipped: no line lost, none twice', async (t) => {
  const f = fixture(t, { enable: true, rolling: { time: 1 }, compression: true, retention: 10 });
  f.hub.write({ kind: 'access', host: 'a.test', text: 'first\n' });
  await f.hub.flush();
  const sent: string[] = ['first'];
  // Writers keep appending while the roll runs: batches before, during and after it.
  const write = (round: number): void => {
    for (const w of [0, 1]) {
      const tag = `r${round}w${w}`;
      t.ok(f.batch(w, tag, 20), `${tag} appended directly`);
      for (let i = 0; i < 20; i++) sent.push(`${tag}-${i}`);
    }
  };
  write(0);
  f.setClock(Date.UTC(2026, 10, 25, 10, 1, 5));
  const rolling = f.hub.tick();
  write(1);
  await rolling;
  write(2);
  await Promise.all(f.writers.map((w) => w.settled()));
  await f.hub.flush();
  const names = f.files();
  t.same(names, ['access_20261125_1000.log.gz', 'access_20261125_1001.log'], 'the old period gzipped, the new one current');
  const old = gunzipSync(fs.readFileSync(path.join(f.hostDir, names[0]!))).toString();
  const current = fs.readFileSync(path.join(f.hostDir, names[1]!), 'utf8');
  const seen = (old + current).split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.split(' ')[0]!);
  t.same([...seen].sort(), [...sent].sort(), 'every line once, across the two files');
  t.ok(current.startsWith('#Software:'), 'the new file starts with its header');
  t.ok(current.includes('r2w0-0') && current.includes('r2w1-0'), 'lines after the roll are in the new file');
});

t.test('a log that rolls by size is written by the primary alone, which keeps each file within its size', async (t) => {
  const f = fixture(t, { enable: true, rolling: { size: 1 } });
  f.hub.write({ kind: 'access', host: 'a.test', text: 'first\n' });
  await f.hub.flush();
  t.same(f.announced.at(-1), {}, 'no direct file announced');
  t.equal(f.batch(0, 'w0', 1), false, 'the writer ships its batch');
});

t.test('a file the writer cannot append to is reported, and its lines are dropped without stopping the writer', async (t) => {
  const f = fixture(t, { enable: true });
  f.hub.write({ kind: 'access', host: 'a.test', text: 'first\n' });
  await f.hub.flush();
  fs.rmSync(f.hostDir, { recursive: true, force: true });
  fs.writeFileSync(path.join(f.hostDir), 'a file where the directory was');
  // A writer that had not opened the file yet cannot open it now.
  t.ok(f.batch(1, 'lost', 5));
  await f.writers[1]!.settled();
  t.equal(f.failures.length, 1, 'reported once');
  t.match(f.failures[0], /a\.test\/access\.log$/);
  t.ok(f.batch(1, 'lost-again', 5));
  await f.writers[1]!.settled();
  t.equal(f.failures.length, 1, 'not again within the minute');
});

t.test('a rolled file is gzipped only once the slowest writer let it go: its last lines are in the gzip', async (t) => {
  const f = fixture(t, { enable: true, rolling: { time: 1 }, compression: true, retention: 10 });
  f.hub.write({ kind: 'access', host: 'a.test', text: 'first\n' });
  await f.hub.flush();
  let release!: () => void;
  f.hold(new Promise<void>((r) => { release = r; }));
  const before = f.announced.length;
  f.setClock(Date.UTC(2026, 10, 25, 10, 1, 5));
  const rolling = f.hub.tick();
  await until(() => f.announced.length > before, 'the roll announced the new file');
  t.same(f.files(), ['access_20261125_1000.log', 'access_20261125_1001.log'], 'not gzipped while a writer still has the old file');
  // The slow writer has not heard of the new file: its batch goes to the old one.
  t.ok(f.batch(1, 'late', 10));
  await f.writers[1]!.settled();
  release();
  await rolling;
  await f.hub.flush();
  t.same(f.files(), ['access_20261125_1000.log.gz', 'access_20261125_1001.log']);
  const old = gunzipSync(fs.readFileSync(path.join(f.hostDir, 'access_20261125_1000.log.gz'))).toString();
  t.equal(old.split('\n').filter((l) => l.startsWith('late-')).length, 10, "the slow writer's lines are in the gzip");
});
