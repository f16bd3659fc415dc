// Black-box: the recovery probe of an Inactive origin address writes its origin-log lines
// (document 3: `session-type` `recovery`, `cs-balance` `-`), a failed probe as `#[ERROR:nn]`.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { ORIGIN_FIELDS } from '../../lib/log/origin/line.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

t.test('an Inactive origin address\'s recovery probes write origin-log lines with session-type recovery, failures as #[ERROR:nn]', async (t) => {
  const port = await freePort();
  const dead = await freePort();
  const server = await startServer([{
    name: 'rec.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${dead}`] },
    functions: {
      network: { http: { backEnd: { health: { failCount: 1, recoveryInterval: 1 } } } },
      operations: { log: { meta: { dir: 'logs' }, origin: { loopback: true } } },
    },
  }]);
  const listener = net.createServer((s) => s.destroy());
  t.teardown(async () => { await server.stop(); listener.close(); });
  const file = path.join(server.dir, 'logs', 'rec.test', 'origin.log');
  const entries = (): string[][] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [])
    .filter((l) => l !== '' && (!l.startsWith('#') || l.startsWith('#[ERROR')))
    .map((l) => l.split(' '));
  const field = (v: string[], name: (typeof ORIGIN_FIELDS)[number]): string | undefined => {
    const shift = v[0]!.startsWith('#[ERROR') ? 1 : 0;
    return v[ORIGIN_FIELDS.indexOf(name) + shift];
  };
  const probes = (): string[][] => entries().filter((v) => field(v, 'session-type') === 'recovery');

  const r = await request(`http://127.0.0.1:${port}/x`, { headers: { host: 'rec.test' } });
  await r.body.text();
  t.ok(r.statusCode >= 500, 'the origin refuses: the address goes Inactive');
  await until(() => probes().length >= 1, 'a failed recovery probe line', 10_000);
  const failed = probes()[0]!;
  t.match(failed[0], /^#\[ERROR:0[13]\]$/, 'a failed probe is an error line');
  t.equal(failed.length, ORIGIN_FIELDS.length + 1, 'every field of the origin log');
  t.equal(field(failed, 's-ip'), '127.0.0.1');
  t.equal(field(failed, 's-port'), String(dead));
  t.equal(field(failed, 'cs-balance'), '-', 'a recovery probe has no balance mode (document 3)');

  await new Promise<void>((resolve) => listener.listen(dead, '127.0.0.1', resolve));
  await until(() => probes().some((v) => !v[0]!.startsWith('#[ERROR')), 'a successful recovery probe line', 10_000);
  const ok = probes().find((v) => !v[0]!.startsWith('#[ERROR'))!;
  t.equal(ok.length, ORIGIN_FIELDS.length);
  t.equal(field(ok, 'sc-sock-error'), '-');
  t.match(field(ok, 'time-connect'), /^\d+$/);
});
