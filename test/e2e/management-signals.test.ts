// Black-box: the signals the primary handles (SIGHUP reload, SIGUSR1, SIGUSR2 rolling restart)
// never take the management API down, and SIGUSR1 does not open node's inspector.
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { request } from '../lifecycle/fixtures/helpers.js';
import { fetchHost, LOCAL_LOGS, until } from '../lifecycle/fixtures/node.js';

/**
 * The HTTP status of a management call on a new connection (a kept-alive one would outlive a
 * closed listening socket), or the connection error's code when no answer came.
 */
async function apiAnswer(apiPort: number): Promise<number | string> {
  try {
    return (await request(apiPort, 'GET', '/get/setting/running.meta')).status;
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).message;
  }
}

t.test('the management API still answers after SIGUSR2, SIGHUP and SIGUSR1 (twice), and the node keeps serving', async (t) => {
  const origin = await new TestOrigin().start();
  t.teardown(() => origin.stop());
  const port = await freePort();
  const server = await startServer([{ name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { extra: LOCAL_LOGS });
  t.teardown(() => server.stop());
  t.equal(await apiAnswer(server.apiPort), 200, 'the API answers before any signal');

  // Each signal, and the log line that says the primary has handled it.
  const steps: Array<[NodeJS.Signals, string]> = [
    ['SIGUSR2', 'rolling restart done'],
    ['SIGHUP', 'setting reloaded'],
    ['SIGUSR1', 'SIGUSR1 received; nothing to do'],
    ['SIGUSR1', 'SIGUSR1 received; nothing to do'],
  ];
  for (const [sig, msg] of steps) {
    const count = (): number => server.logs.filter((l) => l.includes(`"msg":"${msg}"`)).length;
    const before = count();
    server.signal(sig);
    await until(async () => (count() > before ? true : undefined), `the log line "${msg}" after ${sig}`, 20_000);
    t.equal(await apiAnswer(server.apiPort), 200, `the API answers after ${sig}`);
    t.equal((await fetchHost(port, 'a.com', `/after-${sig}`)).status, 200, `the node serves after ${sig}`);
  }
  t.equal(server.proc.exitCode, null, 'the primary is still running');
  t.notOk(server.logs.some((l) => /Debugger listening/.test(l)), 'SIGUSR1 did not open the inspector');
  t.equal(await server.stop(), 0, 'SIGTERM still stops the node cleanly');
});
