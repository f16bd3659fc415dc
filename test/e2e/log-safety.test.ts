// Black-box: with every log on and their directories unwritable (a file in the way, which root
// cannot write through either), serving goes on and each failing file is reported once a minute:
// in the error log while it can be written, on stderr when the error log is the one failing.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, startWithSetting, writeSetting } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import os from 'node:os';

const origin = await new TestOrigin().start();

/** Every log of document 3 on, the per-host ones in `hostDir`, the global ones in `globalDir` (error in `errorDir`). */
async function start(dirs: { hostDir: string; globalDir: string; errorDir: string }) {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'svc-test-'));
  for (const d of [dirs.hostDir, dirs.globalDir, dirs.errorDir]) {
    if (d.startsWith('blocked')) fs.writeFileSync(path.join(dir, d), 'a file where the log directory should be');
  }
  const port = await freePort();
  const basePort = await freePort();
  const apiPort = await freePort();
  const on = { enable: true, rolling: { size: 1 }, compression: true };
  const setting = baseSetting([{ name: 'a.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], basePort, {
    extra: {
      functions: { operations: { log: {
        meta: { dir: dirs.hostDir }, access: { ...on, loopback: true }, origin: { ...on, loopback: true }, dns: on, monitoring: on,
      } } },
      env: { log: {
        meta: { dir: dirs.globalDir, port: await freePort() }, info: on, watch: on,
        error: { ...on, dir: dirs.errorDir }, metrics: { ...on, schedule: '* * * * * *' }, system: on, originError: { ...on, warning: true },
      } },
    },
  }, apiPort);
  const server = await startWithSetting(dir, await writeSetting(dir, setting), basePort, undefined, apiPort);
  return { server, port, dir };
}

async function load(port: number, n: number): Promise<number[]> {
  const dispatcher = new Agent({ connections: 4 });
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await request(`http://127.0.0.1:${port}/p${i % 5}?i=${i}`, { headers: { host: 'a.test' }, dispatcher });
    await r.body.text();
    statuses.push(r.statusCode);
  }
  await dispatcher.close();
  return statuses;
}

t.teardown(() => origin.stop());

t.test('every log unwritable but the error log: requests succeed, each file reported once', async (t) => {
  const { server, port, dir } = await start({ hostDir: 'blocked-host', globalDir: 'blocked-global', errorDir: 'errors' });
  t.teardown(async () => { await server.stop(); fs.rmSync(dir, { recursive: true, force: true }); });
  const statuses = await load(port, 200);
  t.same([...new Set(statuses)], [200], 'every request answered 200');
  // The error log rolls by size here: error_<yyyymmdd>_<hhmmss>.log.
  const errorDir = path.join(dir, 'errors');
  const reports = (): string[] => fs.readdirSync(errorDir).filter((f) => f.startsWith('error_'))
    .flatMap((f) => fs.readFileSync(path.join(errorDir, f), 'utf8').split('\n')).filter((l) => l.includes(' 4001 '));
  const reported = (what: string): boolean => reports().some((l) => l.includes(what));
  await until(() => ['blocked-host/a.test/access', 'blocked-host/a.test/origin', 'blocked-global/info.log', 'blocked-global/watch.log', 'blocked-global/metrics_'].every(reported),
    'a report for each failing file', 15_000);
  // More failures within the minute: still one line per file.
  await load(port, 100);
  const files = reports().map((l) => /: (\S+): /.exec(l.split('[Error] ')[1]!)?.[1]);
  t.equal(new Set(files).size, files.length, `one report per file (${files.join(' ')})`);
  t.match(reports()[0], /^\S+ \S+ 4001 - - - \[Error\] log file cannot be written; its lines are dropped: \S+: (ENOTDIR|EEXIST)/);
});

t.test('the error log itself unwritable: requests succeed and the failure goes to stderr once a minute', async (t) => {
  const { server, port, dir } = await start({ hostDir: 'blocked-host', globalDir: 'blocked-global', errorDir: 'blocked-errors' });
  t.teardown(async () => { await server.stop(); fs.rmSync(dir, { recursive: true, force: true }); });
  const statuses = await load(port, 200);
  t.same([...new Set(statuses)], [200], 'every request answered 200');
  const stderr = (): string[] => server.logs.filter((l) => / 4001 log file cannot be written/.test(l));
  await until(() => stderr().some((l) => l.includes('blocked-errors/error.log')), 'the error log failure on stderr', 15_000);
  await load(port, 100);
  const errorLog = stderr().filter((l) => l.includes('blocked-errors/error.log'));
  t.equal(errorLog.length, 1, 'once within the minute');
  t.ok(stderr().some((l) => l.includes('blocked-host/a.test/access')), 'the other failures have nowhere else to go: stderr too');
});
