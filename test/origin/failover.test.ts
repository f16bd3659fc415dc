import t from 'tap';
import net from 'node:net';
import { Readable } from 'node:stream';
import { OriginError, OriginSet, type OriginOptions, type StateChange } from '../../lib/origin/index.js';
import { deadPort, startOrigin, until } from './fixtures/origins.js';

const sets: OriginSet[] = [];
t.teardown(() => Promise.all(sets.map((s) => s.close())));

function set(o: Partial<OriginOptions> & { address: string[] }): OriginSet {
  const s = new OriginSet({ vhost: 'www.v.com', protocol: 'http', address2: [], recoveryIntervalMs: 100, ...o });
  sets.push(s);
  return s;
}

async function get(s: OriginSet, url = '/') {
  const res = await s.request({ method: 'GET', url, headers: {} });
  return { ...res, text: (await res.body.setEncoding('utf8').toArray()).join('') };
}

t.test('a refused connection moves on to the next address', async (t) => {
  const good = await startOrigin();
  t.teardown(() => good.stop());
  const dead = await deadPort();
  const s = set({ address: [`127.0.0.1:${dead}`, `127.0.0.1:${good.port}`] });
  const r = await get(s, '/f');
  t.equal(r.statusCode, 200);
  t.equal(r.text, 'GET /f');
  t.equal(r.address, `127.0.0.1:${good.port}`);
  t.equal(r.secondary, false);
  t.same(s.status().Address, [{ [`127.0.0.1:${dead}`]: 'Active' }, { [`127.0.0.1:${good.port}`]: 'Active' }], 'one failure does not exclude');
});

t.test('a streamed body is resent to the next address when the first one refused', async (t) => {
  const good = await startOrigin();
  t.teardown(() => good.stop());
  const s = set({ address: [`127.0.0.1:${await deadPort()}`, `127.0.0.1:${good.port}`] });
  const res = await s.request({ method: 'POST', url: '/b', headers: {}, body: Readable.from([Buffer.from('abc'), Buffer.from('def')]) });
  await res.body.resume();
  t.equal(good.seen[0]!.body, 'abcdef');
});

t.test('a POST whose connection is closed without an answer is not sent again elsewhere', async (t) => {
  const rude = await startOrigin((req) => req.socket.destroy());
  const good = await startOrigin();
  t.teardown(async () => { await rude.stop(); await good.stop(); });
  const s = set({ address: [`127.0.0.1:${rude.port}`, `127.0.0.1:${good.port}`] });
  const err = await s.request({ method: 'POST', url: '/p', headers: {}, body: Readable.from([Buffer.from('x')]) }).catch((e: unknown) => e);
  t.match(err, { code: 'ORIGIN_RESET', status: 502 });
  t.equal(good.seen.length, 0);
  const r = await get(s, '/g');
  t.equal(r.statusCode, 200, 'a GET closed the same way goes on to the next address');
  t.equal(good.seen.length, 1);
});

t.test('when no address can be connected the error is ORIGIN_CONNECT (502)', async (t) => {
  const s = set({ address: [`127.0.0.1:${await deadPort()}`], address2: [`127.0.0.1:${await deadPort()}`] });
  const err = await s.request({ method: 'GET', url: '/', headers: {} }).catch((e: unknown) => e);
  t.ok(err instanceof OriginError);
  t.match(err, { code: 'ORIGIN_CONNECT', status: 502, sockError: 'Server-Close', attempts: 2 });
});

t.test('address2 serves when the primary addresses are Inactive', async (t) => {
  const second = await startOrigin();
  t.teardown(() => second.stop());
  const d1 = await deadPort();
  const d2 = await deadPort();
  const s = set({ address: [`127.0.0.1:${d1}`, `127.0.0.1:${d2}`], address2: [`127.0.0.1:${second.port}`], failCount: 1, recoveryIntervalMs: 60_000 });
  const r1 = await get(s, '/1');
  t.equal(r1.secondary, true, 'both primaries just failed');
  const st = s.status();
  t.same(st.Address, [{ [`127.0.0.1:${d1}`]: 'Inactive' }, { [`127.0.0.1:${d2}`]: 'Inactive' }]);
  t.same(st.Address2, [{ [`127.0.0.1:${second.port}`]: 'Active' }]);
  t.same(st.InactiveIP, [{ '127.0.0.1': 0 }, { '127.0.0.1': 0 }]);
  t.same(st.ActiveIP, [{ '127.0.0.1': 0 }]);
  t.equal(s.allExcluded(), false);
  const r2 = await get(s, '/2');
  t.equal(r2.secondary, true);
  t.equal(r2.address, `127.0.0.1:${second.port}`);
});

t.test('an address becomes Inactive after failCount failures and Active again when the probe reaches it', async (t) => {
  const changes: StateChange[] = [];
  const port = await deadPort();
  // The probes are TCP connects; counting the ones to this port shows that they ran and failed.
  let probes = 0;
  const connect = ((...args: Parameters<typeof net.connect>) => {
    const o = args[0];
    if (typeof o === 'object' && (o as net.TcpNetConnectOpts).port === port) probes++;
    return net.connect(...args);
  }) as typeof net.connect;
  const health = await t.mockImport<typeof import('../../lib/origin/health.js')>('../../lib/origin/health.js', {
    'node:net': { ...net, default: { ...net, connect }, connect },
  });
  const { OriginSet: Probed } = await t.mockImport<typeof import('../../lib/origin/origin-set.js')>('../../lib/origin/origin-set.js', {
    '../../lib/origin/health.js': health,
  });
  const s = new Probed({ vhost: 'www.v.com', protocol: 'http', address: [`127.0.0.1:${port}`], address2: [], failCount: 2, recoveryIntervalMs: 50, onStateChange: (c) => changes.push(c) });
  t.teardown(() => s.close());
  await s.request({ method: 'GET', url: '/', headers: {} }).catch(() => undefined);
  t.same(s.status().Address, [{ [`127.0.0.1:${port}`]: 'Active' }], 'one failure is not enough');
  await s.request({ method: 'GET', url: '/', headers: {} }).catch(() => undefined);
  t.same(s.status().Address, [{ [`127.0.0.1:${port}`]: 'Inactive' }]);
  t.equal(s.allExcluded(), true);
  t.ok(await until(() => probes >= 2), 'the address is probed');
  t.same(s.status().Address, [{ [`127.0.0.1:${port}`]: 'Inactive' }], 'probes fail while the origin is down');

  const back = await startOrigin(undefined, port);
  t.teardown(() => back.stop());
  t.ok(await until(() => s.status().Address[0]![`127.0.0.1:${port}`] === 'Active', 2000), 'probe brought it back');
  t.equal(back.seen.length, 0, 'the probe is a TCP connect, not a request');
  t.equal((await get(s)).statusCode, 200);
  t.match(changes, [{ state: 'Inactive', reason: 'failures' }, { state: 'Active', reason: 'probe' }]);
  t.ok(changes.every((c) => typeof c.at === 'number' && c.ip === '127.0.0.1'));
});

t.test('when every address is Inactive they are still tried in order and reported', async (t) => {
  const port = await deadPort();
  const s = set({ address: [`127.0.0.1:${port}`], failCount: 1, recoveryIntervalMs: 60_000 });
  await s.request({ method: 'GET', url: '/', headers: {} }).catch(() => undefined);
  t.equal(s.allExcluded(), true);
  const back = await startOrigin(undefined, port);
  t.teardown(() => back.stop());
  const r = await get(s, '/again');
  t.equal(r.statusCode, 200, 'the recovered origin answered before any probe');
  t.equal(s.allExcluded(), false, 'a success makes the address Active');
});

t.test('reset() makes every address Active and opens new connections', async (t) => {
  const good = await startOrigin();
  t.teardown(() => good.stop());
  const dead = await deadPort();
  const s = set({ address: [`127.0.0.1:${dead}`, `127.0.0.1:${good.port}`], failCount: 1, recoveryIntervalMs: 60_000 });
  await get(s, '/a');
  await new Promise((r) => setImmediate(r));
  await get(s, '/b');
  t.equal(good.seen[0]!.remotePort, good.seen[1]!.remotePort, 'kept alive before the reset');
  t.same(s.status().Address[0], { [`127.0.0.1:${dead}`]: 'Inactive' });
  s.reset();
  t.same(s.status().Address, [{ [`127.0.0.1:${dead}`]: 'Active' }, { [`127.0.0.1:${good.port}`]: 'Active' }]);
  t.same(s.status().InactiveIP, []);
  await get(s, '/c');
  t.not(good.seen[2]!.remotePort, good.seen[1]!.remotePort, 'a new connection after the reset');
});

t.test('status() has the /monitoring/origin shape', async (t) => {
  const s = set({ address: ['127.0.0.1:1/x', 'localhost:2'], address2: ['10.0.0.9'] });
  await until(() => s.status().ActiveIP.length === 3, 2000);
  const st = s.status();
  t.equal(st.VirtualHost, 'www.v.com');
  t.same(st.Address, [{ '127.0.0.1:1/x': 'Active' }, { 'localhost:2': 'Active' }]);
  t.same(st.Address2, [{ '10.0.0.9': 'Active' }]);
  t.equal(st.ActiveIP.length, 3);
  t.same(st.ActiveIP[0], { '127.0.0.1': 0 });
  t.ok(Object.values(st.ActiveIP[1]!)[0]! > 0, 'a domain IP shows its remaining TTL');
  t.same(st.InactiveIP, []);
});
