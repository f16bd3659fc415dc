// Black-box: `/setting/deploy/local` changing one host and removing another while clients keep
// requesting the hosts that stay: none of their requests fails, on two workers.
import fs from 'node:fs/promises';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { call, fetchHost, infoLog, LOCAL_LOGS } from '../lifecycle/fixtures/node.js';

for (const deploy of ['exclusive', 'shared'] as const) {
  t.test(`deploy/local (${deploy}) changing and removing hosts under load fails no request of the hosts that stay`, async (t) => {
    const origin = await new TestOrigin().start();
    const port = await freePort();
    const h = (name: string, p = '') => ({ name, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}${p}`] } });
    const extra = { ...LOCAL_LOGS, meta: { setting: { deploy } } };
    const server = await startServer([h('stay.com'), h('chg.com', '/old'), h('gone.com')], { workers: 2, extra });
    t.teardown(async () => { await server.stop(); await origin.stop(); });

    const counts = { 'stay.com': { ok: 0, failed: 0 }, 'chg.com': { ok: 0, failed: 0 } };
    const problems: string[] = [];
    let stop = false;
    const agent = new Agent({ connections: 8 });
    const loop = async (host: 'stay.com' | 'chg.com'): Promise<void> => {
      const until = Date.now() + 20_000;
      for (let i = 0; !stop && Date.now() < until && i < 100_000; i++) {
        try {
          const r = await request(`http://127.0.0.1:${port}/load/${i % 50}`, { headers: { host }, dispatcher: agent });
          await r.body.text();
          if (r.statusCode === 200) counts[host].ok++; else { counts[host].failed++; problems.push(`${host} ${r.statusCode}`); }
        } catch (err) { counts[host].failed++; problems.push(`${host} ${(err as Error).message}`); }
      }
    };
    const loops = [loop('stay.com'), loop('stay.com'), loop('chg.com'), loop('chg.com')];
    const answered = (host: 'stay.com' | 'chg.com'): number => counts[host].ok + counts[host].failed;
    t.ok(await waitFor(() => answered('stay.com') >= 10 && answered('chg.com') >= 10), 'the load is running on both hosts');

    await fs.writeFile(server.settingPath, JSON.stringify(baseSetting([h('stay.com'), h('chg.com', '/new')], server.basePort, { workers: 2, extra }, server.apiPort)));
    const r = await call(server.apiPort, '/setting/deploy/local');
    t.equal(r.json.status, 'OK', r.text);
    t.strictSame((r.json.result as { changedHosts: unknown }).changedHosts, deploy === 'shared' ? ['chg.com', 'gone.com'] : 'all');
    t.equal((await fetchHost(port, 'chg.com', '/x')).body, 'origin:GET /new/x', 'the changed host serves its new origin at once');
    t.equal((await fetchHost(port, 'gone.com', '/x')).status, 404, 'the removed host is gone at once');
    const stayAt = answered('stay.com');
    const chgAt = answered('chg.com');
    t.ok(await waitFor(() => answered('stay.com') >= stayAt + 15 && answered('chg.com') >= chgAt + 15), 'the load goes on after the deploy');
    stop = true;
    await Promise.all(loops);
    await agent.close();
    t.equal(counts['stay.com'].failed, 0, `no failed request for the host that stays among ${counts['stay.com'].ok}`);
    t.equal(counts['chg.com'].failed, 0, `no failed request for the changed host among ${counts['chg.com'].ok}: ${problems.join(', ')}`);
    t.ok(counts['stay.com'].ok > 20);
    t.match(await infoLog(server), /setting applied from deploy\/local .*"deleted":\["gone.com"\],"changed":\["chg.com"\]/);
  });
}
