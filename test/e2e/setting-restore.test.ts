// Black-box: a node whose setting.json disappeared (lost in a crash, deleted by mistake) starts
// from the newest setting of its history, and the file is back on disk.
import fs from 'node:fs/promises';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer, startWithSetting } from '../helpers/server.js';
import { call, fetchHost, LOCAL_LOGS } from '../lifecycle/fixtures/node.js';

t.test('a missing setting.json is restored from the history before the node loads it', async (t) => {
  const origin = await new TestOrigin().start();
  t.teardown(() => origin.stop());
  const port = await freePort();
  const first = await startServer([{ name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { extra: LOCAL_LOGS });
  const created = await call(first.apiPort, '/setting/vhosts', { body: JSON.stringify({ name: 'b.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}/b`] } }) });
  t.equal(created.status, 200, created.text);
  const applied = await fs.readFile(first.settingPath, 'utf8');
  t.equal(await first.stop(), 0);

  await fs.rm(first.settingPath);
  const second = await startWithSetting(first.dir, first.settingPath, first.basePort, undefined, first.apiPort);
  t.teardown(() => second.stop());
  await second.waitForLog((l) => l.msg === 'setting file was missing; restored from the history');
  t.equal(await fs.readFile(first.settingPath, 'utf8'), applied, 'setting.json is the newest applied setting');
  t.equal((await fetchHost(port, 'b.com', '/x')).body, 'origin:GET /b/x', 'the host added through the API serves again');
});
