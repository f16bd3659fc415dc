// Black-box: the `svc` command line an operator uses on a node: --help of every command, the
// exit codes (0 done, 1 failed, 2 usage, 3 node unreachable), and status, purge, install,
// restart and stop against a running node, found by --api or by its setting file.
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { operatorRole, primaryPids, startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';
import { call, svc } from '../lifecycle/fixtures/node.js';

t.test('every command answers --help with its usage and exit 0; a wrong call exits 2', async (t) => {
  for (const c of ['start', 'stop', 'restart', 'reload', 'status', 'validate', 'get', 'purge', 'install', 'release', 'license']) {
    const r = await svc([c, '--help']);
    t.equal(r.code, 0, `${c} --help`);
    t.match(r.stdout, new RegExp(`^svc ${c}\\b`), `${c}: its usage`);
  }
  t.equal((await svc(['frobnicate'])).code, 2, 'an unknown command');
  t.equal((await svc(['purge', '--api', 'http://127.0.0.1:1'])).code, 2, 'purge without a target');
  t.equal((await svc(['release'])).code, 2, 'release without --key');
  const down = await svc(['status', '--api', `http://127.0.0.1:${await freePort()}`]);
  t.equal(down.code, 3, 'no node there: 3');
  t.match(down.stderr, /does not answer/);
});

// One node for the two tests below; the second ends it (restart, then stop).
const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startServer([{ name: 'c.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { extra: operatorRole });
t.teardown(async () => { await server.stop(); await origin.stop(); });

t.test('svc status shows the node\'s State, the one /monitoring/realtime reports', async (t) => {
  const realtime = await call(server.apiPort, '/monitoring/realtime');
  const state = (realtime.json.Host as { State?: string } | undefined)?.State;
  t.match(state, /^(Healthy|Inactive|Emergency)$/, realtime.text.slice(0, 200));
  const status = await svc(['status', '--api', `http://127.0.0.1:${server.apiPort}`]);
  t.equal(status.code, 0, status.stderr);
  t.match(status.stdout, new RegExp(`^running at http://127\\.0\\.0\\.1:\\d+: version \\S+, State ${state}\n`));
});

t.test('status, purge, install, restart and stop act on a running node through its API', async (t) => {
  const api = ['--api', `http://127.0.0.1:${server.apiPort}`];

  const status = await svc(['status', '--setting', server.settingPath]);
  t.equal(status.code, 0, status.stderr);
  t.match(status.stdout, /^running at http:\/\/127\.0\.0\.1:\d+: version \d+\.\d+\.\d+/, 'found through the setting file');
  const purge = await svc(['purge', 'c.com/a', 'c.com/b/*', ...api]);
  t.equal(purge.code, 0, purge.stderr);
  const install = await svc(['install', ...api]);
  t.equal(install.code, 1, 'no repository configured: failed');
  t.match(install.stderr, /install failed \(400\): no release repository is configured \(env\.install\.repository\)/);

  const [before] = primaryPids(server);
  const restart = await svc(['restart', ...api]);
  t.equal(restart.code, 0, restart.stderr);
  t.match(restart.stdout, /restarted/);
  await pollUntil(async () => primaryPids(server), (p) => p.length === 1 && p[0] !== before, { timeoutMs: 30_000, intervalMs: 100 });
  const again = await svc(['status', '--wait', '20', ...api]);
  t.equal(again.code, 0, 'the new primary answers');

  const stop = await svc(['stop', ...api]);
  t.equal(stop.code, 0, stop.stderr);
  t.equal(await server.exited, 0, 'the node stopped with 0');
});
