// Black-box: rolling by size, gzip at roll, retention and unify on the real server (2 workers):
// two hosts write one unified access file under meta.dir, which rolls at 1 MB.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const host = (name: string) => ({ name, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } });
const server = await startServer([host('one.test'), host('two.test')], {
  workers: 2,
  extra: { functions: { operations: { log: {
    meta: { dir: 'logs' },
    access: { loopback: true, unify: true, rolling: { size: 1 }, compression: true, retention: 3 },
    origin: { enable: false },
  } } } },
});
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(server.dir, { recursive: true, force: true }); });

const dir = path.join(server.dir, 'logs');
const files = (): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.startsWith('access_')).sort() : []);

t.test('a unified log rolls at its size, gzips what rolled and keeps the retention', async (t) => {
  // ~7 KB per line (the query is logged): 450 lines are about 3 MB, three rolls.
  const q = 'q'.repeat(7000);
  const dispatcher = new Agent({ connections: 4 });
  for (let i = 0; i < 450; i++) {
    const r = await request(`http://127.0.0.1:${port}/p${i}?${q}`, { headers: { host: i % 2 === 0 ? 'one.test' : 'two.test' }, dispatcher });
    await r.body.text();
  }
  await dispatcher.close();
  // Settled: the last roll's gzip and then the pruning to the retention done (they run after the
  // lines are written, the pruning after the gzip).
  const settled = (): boolean => {
    const f = files();
    return f.filter((n) => n.endsWith('.log.gz')).length >= 2 && f.filter((n) => n.endsWith('.log')).length === 1 && !f.some((n) => n.endsWith('.part'))
      && f.length <= 3;
  };
  await until(settled, 'two compressed rolls, pruned to the retention', 15_000);
  const all = files();
  t.ok(all.length <= 3, `at most retention files (${all.join(' ')})`);
  t.ok(all.every((f) => /^access_\d{8}_\d{6}(-\d+)?\.log(\.gz)?$/.test(f)), 'names with seconds');
  t.equal(all.filter((f) => f.endsWith('.log')).length, 1, 'one current file');
  t.notOk(fs.readdirSync(dir).some((f) => f.endsWith('.part')), 'no half-written gzip left');
  t.notOk(fs.existsSync(path.join(dir, 'one.test')), 'no per-host directory with unify');
  const rolled = gunzipSync(fs.readFileSync(path.join(dir, all.find((f) => f.endsWith('.gz'))!))).toString();
  t.ok(rolled.length <= 1024 * 1024, 'a rolled file stays within the size');
  const lines = rolled.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  t.ok(lines.every((l) => / (one|two)\.test (one|two)\.test$/.test(l)), 'every line whole, x-vhost and cs-host present');
  t.ok(lines.some((l) => l.includes(' one.test ')) && lines.some((l) => l.includes(' two.test ')), 'both hosts in one file');
});
