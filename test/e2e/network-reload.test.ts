// Black-box: the network rules follow a setting reload (SIGHUP), and a reload with a rule that
// cannot compile is refused at its JSON path while the running rules stay.
import fs from 'node:fs';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { baseSetting, startServer, writeSetting } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const hostWith = (modify: unknown) => [{
  name: 'r.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  functions: { network: { http: { frontEnd: { modify } } } },
}];
const server = await startServer(hostWith({ matchingList: [] }));
t.teardown(async () => { await server.stop(); await origin.stop(); });

const seenEdge = async (p: string): Promise<unknown> => {
  const r = await request(`http://127.0.0.1:${port}${p}`, { headers: { host: 'r.test' } });
  await r.body.text();
  return origin.seen.filter((s) => s.url === p).at(-1)?.headers['x-edge'];
};

/** Rewrites setting.json, sends SIGHUP and waits for the log line saying how it went. */
async function reload(modify: unknown, line: string): Promise<void> {
  const before = server.logs.filter((l) => l.includes(line)).length;
  await writeSetting(server.dir, baseSetting(hostWith(modify), server.basePort, {}, server.apiPort));
  const text = fs.readFileSync(server.settingPath, 'utf8');
  server.signal('SIGHUP');
  t.ok(await waitFor(() => server.logs.filter((l) => l.includes(line)).length > before), line);
  if (line === 'setting reloaded') {
    await waitFor(async () => (await (await fetch(`http://127.0.0.1:${server.apiPort}/setting/setting.json`)).text()) === text);
  }
}

t.test('a modify rule added by a reload applies to the next request; a bad one is refused and the running one stays', async (t) => {
  t.equal(await seenEdge('/a'), undefined);
  await reload({ matchingList: [{ headers: [{ key: 'X-Edge', value: 'v2' }] }] }, 'setting reloaded');
  t.equal(await seenEdge('/b'), 'v2');
  await reload({ matchingList: [{ pattern: '$URL[(]', headers: [{ key: 'X-Edge', value: 'v3' }] }] }, 'setting refused');
  const refused = server.logs.find((l) => l.includes('setting refused'))!;
  t.match(refused, 'functions.network.http.frontEnd.modify.matchingList[0].pattern');
  t.equal(await seenEdge('/c'), 'v2');
});
