// The supervisor's ListenBroker in-process: a port another process holds fails the acquire with
// its errno name and leaves nothing behind, so the next acquire, once the port is free, binds it.
import net from 'node:net';
import t from 'tap';
import { ListenBroker, listenKey } from '../../lib/supervisor/listen-broker.js';
import { freePort } from '../helpers/ports.js';

t.test('a taken port fails the acquire with EADDRINUSE; once freed, the next acquire binds that very port', async (t) => {
  const port = await freePort();
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => { if (blocker.listening) blocker.close(() => r()); else r(); }));
  const broker = new ListenBroker();

  await t.rejects(broker.acquire('1/1/', '127.0.0.1', port), { code: 'EADDRINUSE', message: `listen EADDRINUSE: 127.0.0.1:${port}` });

  await new Promise<void>((r) => blocker.close(() => r()));
  const handle = await broker.acquire('1/1/', '127.0.0.1', port);
  const name: { address?: string; port?: number } = {};
  t.equal(handle.getsockname(name), 0);
  t.match(name, { address: '127.0.0.1', port }, 'the socket is bound to the port asked for');
  t.equal(await broker.acquire('1/2/', '127.0.0.1', port), handle, 'another worker gets the same socket');
  broker.release('1/1/', listenKey('127.0.0.1', port));
  broker.release('1/2/', listenKey('127.0.0.1', port));
});
