// Black-box: deploying a changed setting through the management API while clients keep
// requesting loses no request, and the history records it.
import fs from 'node:fs/promises';
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

t.test('a deploy under load fails no request and the new host serves right after', async (t) => {
  const origin = await new TestOrigin().start();
  const port = await freePort();
  const hosts = [{ name: 'l.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }];
  const server = await startServer(hosts, { workers: 2 });
  t.teardown(async () => { await server.stop(); await origin.stop(); });

  let ok = 0, failed = 0, stop = false;
  const agent = new Agent({ connections: 8 });
  const loop = async (): Promise<void> => {
    const until = Date.now() + 15000;
    for (let i = 0; !stop && Date.now() < until; i++) {
      try {
        const r = await request(`http://127.0.0.1:${port}/load/${i % 50}`, { headers: { host: 'l.com' }, dispatcher: agent });
        await r.body.text();
        if (r.statusCode === 200) ok++; else failed++;
      } catch { failed++; }
    }
  };
  const loops = [loop(), loop(), loop(), loop()];
  t.ok(await waitFor(() => ok >= 20), 'the load is running');

  const next = baseSetting([...hosts, { name: 'new.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/n`] } }], server.basePort, { workers: 2 }, server.apiPort);
  const body = JSON.stringify(next);
  const up = await request(`http://127.0.0.1:${server.apiPort}/setting/upload`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body,
  });
  const answer = await up.body.json() as Record<string, unknown>;
  t.equal(up.statusCode, 200, JSON.stringify(answer));
  t.equal(answer.status, 'OK');
  const r = await request(`http://127.0.0.1:${port}/x`, { headers: { host: 'new.com' } });
  t.equal(await r.body.text(), 'origin:GET /n/x', 'the new host serves as soon as the upload answered');
  const atDeploy = ok + failed;
  t.ok(await waitFor(() => ok + failed >= atDeploy + 40), 'the load goes on after the deploy');
  stop = true;
  await Promise.all(loops);
  await agent.close();
  t.equal(failed, 0, `no failed request among ${ok + failed}`);
  t.ok(ok > 50);

  const history = await request(`http://127.0.0.1:${server.apiPort}/setting/history`);
  const h = await history.body.json() as { history: { hash: string; type: string }[] };
  t.ok(h.history.length >= 2, 'the start and the upload are in the history');
  t.match(h.history[h.history.length - 1]!.hash, /^\d{8}_\d{6}_[0-9a-f]{32}$/);
  const onDisk = JSON.parse(await fs.readFile(server.settingPath, 'utf8')) as { hosting: { name: string }[] };
  t.same(onDisk.hosting.map((x) => x.name), ['l.com', 'new.com'], 'setting.json was rewritten');
});
