// Black-box: where the management API listens. With only loopback addresses in the allowList
// nobody else could be let in, so the port is not opened beyond 127.0.0.1; an allowList that
// admits other addresses opens it on every interface. 127.0.0.2 (also loopback, but not the
// bound 127.0.0.1) stands for "another local address" without leaving the machine.
import net from 'node:net';
import t, { type Test } from 'tap';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { call, LOCAL_LOGS } from '../lifecycle/fixtures/node.js';

/** 'accepted' when a TCP connection to host:port opens, else the error code. */
function connect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.once('connect', () => { s.destroy(); resolve('accepted'); });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

async function node(t: Test, allowList: unknown[]): Promise<number> {
  const port = await freePort();
  const server = await startServer([{ name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: ['127.0.0.1:9'] } }], {
    extra: { env: { ...LOCAL_LOGS.env, management: { api: { allowList } } } },
  });
  t.teardown(() => server.stop());
  return server.apiPort;
}

t.test('with only loopback addresses in the allowList the management API listens on 127.0.0.1 alone', async (t) => {
  const apiPort = await node(t, [{ addr: '127.0.0.1', role: 'admin' }]);
  t.equal((await call(apiPort, '/get/setting/running.meta')).status, 200, 'answers on 127.0.0.1');
  t.equal(await connect('127.0.0.2', apiPort), 'ECONNREFUSED', 'another local address is refused');
});

t.test('with an allowList entry beyond loopback the management API listens on every interface', async (t) => {
  const apiPort = await node(t, [{ addr: '127.0.0.1', role: 'admin' }, { addr: '10.0.0.0/8', role: 'user' }]);
  t.equal((await call(apiPort, '/get/setting/running.meta')).status, 200, 'answers on 127.0.0.1');
  t.equal(await connect('127.0.0.2', apiPort), 'accepted', 'another local address is accepted');
});
