// Black-box: the primary is killed (SIGKILL) while settings are being applied; after a restart
// the setting file is valid and the history agrees with it.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort, isFree } from '../helpers/ports.js';
import { baseSetting, startServer, startWithSetting } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

t.test('a primary killed during deploys restarts on a consistent setting and history', async (t) => {
  const origin = await new TestOrigin().start();
  t.teardown(() => origin.stop());
  const port = await freePort();
  const host = (n: number) => ({ name: 'k.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/v${n}`] } });
  let server = await startServer([host(0)]);
  const { dir, settingPath, basePort, apiPort } = server;
  for (let round = 1; round <= 3; round++) {
    let n = round * 100;
    let stop = false;
    let answered = 0;
    const uploads = (async () => {
      while (!stop) {
        const body = JSON.stringify(baseSetting([host(n++)], basePort, {}, apiPort));
        try {
          const r = await request(`http://127.0.0.1:${apiPort}/setting/upload`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body });
          await r.body.text();
          answered++;
        } catch { /* the primary is gone */ }
      }
    })();
    // Killed after a random number (1 to 4) of deploys, while the next one is under way.
    const deploys = 1 + Math.floor(Math.random() * 4);
    t.ok(await waitFor(() => answered >= deploys, { timeoutMs: 30_000 }), `round ${round}: ${deploys} deploys answered`);
    server.signal('SIGKILL');
    await server.exited;
    stop = true;
    await uploads;
    // Its workers leave when the primary's channel closes: then their ports are free again.
    t.ok(await waitFor(async () => await isFree(port) && await isFree(basePort), { timeoutMs: 10_000, intervalMs: 50 }), `round ${round}: the workers have left`);
    server = await startWithSetting(dir, settingPath, basePort, undefined, apiPort);
    const text = await fs.readFile(settingPath, 'utf8');
    const onDisk = JSON.parse(text) as { hosting: { origin: { address: string[] } }[] };
    const r = await request(`http://127.0.0.1:${apiPort}/setting/history`);
    const { history } = await r.body.json() as { history: { hash: string }[] };
    const newest = history[history.length - 1]!;
    t.equal(newest.hash.slice(-32), createHash('md5').update(text).digest('hex'), `round ${round}: the newest history entry is the file on disk`);
    const served = await request(`http://127.0.0.1:${port}/x`, { headers: { host: 'k.com' } });
    t.equal(await served.body.text(), `origin:GET ${onDisk.hosting[0]!.origin.address[0]!.split(':')[1]!.replace(/^\d+/, '')}/x`, `round ${round}: the restarted server serves the setting on disk`);
  }
  await server.stop();
});
