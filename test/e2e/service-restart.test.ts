// Black-box: /command/service/restart replaces every process of the node (the primary too)
// while clients keep requesting over keep-alive and new connections: no request fails, no
// connection is refused, and an env change waiting as the artifact becomes the running setting.
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, operatorRole, primaryPids, startServer, workerPids } from '../helpers/server.js';
import { pollUntil, waitFor } from '../helpers/wait.js';

/** One request on a connection of its own (no keep-alive): a refused connection shows here. */
function freshRequest(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, headers: { host: 'r.com', connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

t.test('a restart under load replaces every process without a failed request or a refused connection, and applies the env artifact', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const hosts = [{ name: 'r.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }];
  const server = await startServer(hosts, { workers: 2, extra: operatorRole });
  t.teardown(async () => { await server.stop(); await origin.stop(); });
  const api = `http://127.0.0.1:${server.apiPort}`;
  const [oldPrimary] = primaryPids(server);
  const oldWorkers = workerPids(server);
  t.equal(oldWorkers.length, 2, 'two workers before');

  // An env change (three workers) waits as the artifact until the restart.
  const next = baseSetting(hosts, server.basePort, { workers: 3, extra: operatorRole }, server.apiPort);
  const body = JSON.stringify(next);
  const up = await request(`${api}/setting/upload`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body });
  t.equal(up.statusCode, 200, await up.body.text());
  const artifact = await request(`${api}/get/setting/artifact`);
  t.match(await artifact.body.json(), { result: { env: { management: { cluster: { meta: { workers: 3 } } } } } }, 'the env change is the artifact');

  const counts = { ok: 0, failed: 0, refused: 0, fresh: 0, kept: 0 };
  const errors: string[] = [];
  let stop = false;
  const agent = new Agent({ connections: 4, pipelining: 1 });
  const count = (status: number): void => { if (status === 200) counts.ok++; else { counts.failed++; errors.push(`status ${status}`); } };
  const onError = (err: Error & { code?: string }): void => {
    if (err.code === 'ECONNREFUSED') counts.refused++; else counts.failed++;
    errors.push(`${err.code ?? ''} ${err.message}`);
  };
  // Bounded in count and time: 4 loops of at most 4000 requests within 60 s.
  const keptLoop = async (): Promise<void> => {
    const until = Date.now() + 60_000;
    for (let i = 0; !stop && i < 4000 && Date.now() < until; i++) {
      try {
        const r = await request(`http://127.0.0.1:${port}/k/${i % 40}`, { headers: { host: 'r.com' }, dispatcher: agent });
        await r.body.text();
        counts.kept++;
        count(r.statusCode);
      } catch (err) { onError(err as Error); }
    }
  };
  const freshLoop = async (): Promise<void> => {
    const until = Date.now() + 60_000;
    for (let i = 0; !stop && i < 4000 && Date.now() < until; i++) {
      try {
        counts.fresh++;
        count(await freshRequest(port, `/f/${i % 40}`));
      } catch (err) { onError(err as Error); }
    }
  };
  const loops = [keptLoop(), keptLoop(), freshLoop(), freshLoop()];
  t.ok(await waitFor(() => counts.ok >= 50, { timeoutMs: 20_000 }), 'the load is running');

  const r = await request(`${api}/command/service/restart`);
  const answer = await r.body.json() as Record<string, unknown>;
  t.equal(r.statusCode, 200, JSON.stringify(answer));
  t.equal(answer.status, 'success');
  t.equal(answer.method, 'restart');

  // The old primary leaves once its workers drained; the new one and its three workers serve.
  const after = await pollUntil(async () => primaryPids(server), (p) => p.length === 1 && p[0] !== oldPrimary, { timeoutMs: 30_000, intervalMs: 100 });
  t.not(after[0], oldPrimary, 'the primary was replaced');
  const workers = await pollUntil(async () => workerPids(server), (w) => w.length === 3, { timeoutMs: 30_000, intervalMs: 100 });
  t.equal(workers.length, 3, 'the env change applied: three workers');
  t.notOk(workers.some((w) => oldWorkers.includes(w)), 'every worker was replaced');
  const okBefore = counts.ok;
  t.ok(await waitFor(() => counts.ok >= okBefore + 50, { timeoutMs: 20_000 }), 'the load goes on after the restart');
  stop = true;
  await Promise.all(loops);
  await agent.close();
  t.equal(counts.refused, 0, `no connection refused (${counts.fresh} new connections)`);
  t.equal(counts.failed, 0, `no request failed of ${counts.ok + counts.failed}: ${errors.slice(0, 5).join('; ')}`);

  // The management API answers from the new primary, with the artifact now running.
  const running = await pollUntil(async () => {
    try { const g = await request(`${api}/get/setting.env`); return await g.body.json() as Record<string, unknown>; } catch { return undefined; }
  }, (v) => v !== undefined, { timeoutMs: 10_000, intervalMs: 100 });
  t.match(running, { result: { management: { cluster: { meta: { workers: 3 } } } } }, 'the running env is the former artifact');
  const art = await request(`${api}/get/setting/artifact`);
  t.equal(art.statusCode, 404, 'no artifact is left');
  await art.body.text();
  const info = await fs.readFile(path.join(server.dir, 'svclog', 'info.log'), 'utf8');
  t.match(info, /service restart requested/, 'the info log has the restart');
  const watch = await fs.readFile(path.join(server.dir, 'svclog', 'watch.log'), 'utf8');
  t.match(watch, /00010002 - \{\}\n.*00010001 - /s, 'the watch log has the stop, then the start');
});
