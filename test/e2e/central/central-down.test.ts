// Black-box: a central server that accepts connections and never answers costs the node its
// own timeouts only: each call fails after `timeout` seconds with a line in the info log, while
// the node keeps serving and its management API keeps answering.
import fs from 'node:fs/promises';
import net from 'node:net';
import t from 'tap';
import { TestOrigin } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { call, fetchHost, until } from '../../lifecycle/fixtures/node.js';
import { startCentralNode } from './central-server.js';

const sockets = new Set<net.Socket>();
const silent = net.createServer((s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
const origin = await new TestOrigin().start();
const port = await freePort();
const server = await startCentralNode([{ name: 'p.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], {
  features: {
    setting: { enable: true, feed: { type: 'apiPolling', info: { url: `${url}/feed`, schedule: '* * * * * *', timeout: 1 } }, feedback: { type: 'api', info: { url: `${url}/fb`, timeout: 1 } } },
    heartbeat: { enable: true, feedback: { type: 'apiPolling', info: { url: `${url}/hb`, schedule: '* * * * * *', timeout: 1 } } },
  },
});
t.teardown(async () => {
  await server.stop();
  await origin.stop();
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent.close(r));
});

t.test('calls to a silent central server time out and are logged while the node serves', async (t) => {
  const log = await until(async () => {
    const text = await fs.readFile(`${server.dir}/svclog/info.log`, 'utf8').catch(() => '');
    return text.includes('central management: apiPolling feed failed') && text.includes('central management: heartbeat failed') ? text : undefined;
  }, 'timed-out calls in the info log', 20_000);
  t.match(log, /timed out after 1000 ms/);
  for (let i = 0; i < 20; i++) t.equal((await fetchHost(port, 'p.com', `/x${i}`)).status, 200);
  t.equal((await call(server.apiPort, '/setting/setting.json')).status, 200);
});
