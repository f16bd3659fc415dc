// Black-box: the Redis invalidation bus with three real nodes and a real redis-server. Every
// node applies what another received; a node that was stopped catches up before it serves, so
// its first answer after the start is a fresh copy, not the one cached before the purge; the
// statistics say how far behind it is. A node whose Redis is down starts anyway, after
// startTimeout, and says so.
import t from 'tap';
import { busNode, versionedOrigin, type BusNode } from './fixtures/fleet.js';
import { freePort } from '../helpers/ports.js';
import { startRedis } from '../helpers/redis.js';
import { startWithSetting } from '../helpers/server.js';
import { pollUntil, waitFor } from '../helpers/wait.js';
import { call, fetchHost, infoLog } from '../lifecycle/fixtures/node.js';

const redis = await startRedis();
t.teardown(() => redis.stop());
const origin = await versionedOrigin(t);
type Node = BusNode;

const node = (name: string, bus: Record<string, unknown> = {}): Promise<Node> => busNode(t, { redisUrl: redis.url, originPort: origin.port, stream: 'test:inv' }, name, bus);

const get = (n: Node, path: string): Promise<{ status: number; cache: string; body: string }> => fetchHost(n.port, 'a.com', path);
type Obj = Record<string, any>;
const system = async (n: Node): Promise<Obj> => ((await call(n.server.apiPort, '/monitoring/realtime')).json as Obj).Host.System as Obj;

const a = await node('a');
const b = await node('b');
const c = await node('c');

t.test('an invalidation received by one node is applied by the others', async (t) => {
  const first = await get(b, '/one');
  t.equal((await get(b, '/one')).cache, 'TCP_HIT');
  t.equal((await call(a.server.apiPort, '/command/purge?url=a.com/one')).status < 500, true);
  const after = await pollUntil(() => get(b, '/one'), (r) => r.cache !== 'TCP_HIT', { timeoutMs: 10_000, intervalMs: 50 });
  t.not(after.body, first.body, 'node b fetched a fresh copy');
  const sys = await pollUntil(() => system(b), (s) => s.InvalidationBus?.Applied >= 1 && s.InvalidationBus.Pending === 0, { timeoutMs: 10_000, intervalMs: 100 });
  t.match(sys.InvalidationBus, { Connected: true, Applied: Number, Appended: 0, Pending: 0, LagSeconds: 0 });
  t.match((await system(a)).InvalidationBus, { Appended: 1, Applied: 0 }, 'the receiving node appended it and did not apply it twice');
  const metrics = (await call(b.server.apiPort, '/metrics')).text;
  t.match(metrics, /^svc_bus_applied_total(\{[^}]*\})? [1-9]/m);
  t.match(metrics, /^svc_bus_pending_entries(\{[^}]*\})? 0$/m);
});

t.test('a stopped node catches up when it starts again, before it serves the stale copy', async (t) => {
  const cached = await get(c, '/two');
  await get(c, '/three');
  t.equal((await get(c, '/two')).cache, 'TCP_HIT');
  t.equal((await get(c, '/three')).cache, 'TCP_HIT');
  const { dir, settingPath, basePort, apiPort } = c.server;
  t.equal(await c.server.stop(), 0);
  t.equal((await call(a.server.apiPort, '/command/purge?url=a.com/two')).status < 500, true);
  t.equal((await call(b.server.apiPort, '/command/async/hardpurge?url=a.com/three')).status, 200);
  // Both are on the stream once the nodes that received them appended them.
  t.ok(await waitFor(async () => (await system(a)).InvalidationBus.Appended === 2 && (await system(b)).InvalidationBus.Appended === 1, { timeoutMs: 10_000, intervalMs: 100 }));
  const again = await startWithSetting(dir, settingPath, basePort, undefined, apiPort);
  t.teardown(() => again.stop());
  const c2: Node = { server: again, port: c.port };
  const two = await get(c2, '/two');
  t.not(two.cache, 'TCP_HIT', 'the first answer after the start is not the copy cached before the purge');
  t.not(two.body, cached.body, 'a fresh copy');
  t.equal((await get(c2, '/three')).cache, 'TCP_MISS', 'the hard purge removed the copy');
  t.match((await infoLog(again)), /invalidation bus: caught up.*"read":2/);
  const order = (msg: string): number => again.logs.findIndex((l) => l.includes(`"msg":"${msg}"`));
  t.ok(order('invalidation bus: caught up') >= 0 && order('invalidation bus: caught up') < order('started'), 'caught up before the node said it started');
  t.match((await system(c2)).InvalidationBus, { Applied: 2, Pending: 0 });
});

t.test('a purge by tag received by one node is applied by the others', async (t) => {
  const first = await get(b, '/tagged/x');
  t.equal((await get(b, '/tagged/x')).cache, 'TCP_HIT');
  const r = await call(a.server.apiPort, '/command/purge?tag=seg-tagged&vhost=a.com');
  t.equal(r.status < 500, true);
  const after = await pollUntil(() => get(b, '/tagged/x'), (x) => x.cache !== 'TCP_HIT', { timeoutMs: 10_000, intervalMs: 50 });
  t.not(after.body, first.body, 'node b fetched a fresh copy');
});

t.test('a node whose Redis is down starts after startTimeout, serves, and says why in the logs', async (t) => {
  const dead = await freePort();
  const d = await node('d', { url: `redis://127.0.0.1:${dead}`, startTimeout: 1 });
  t.equal((await get(d, '/four')).status, 200, 'it serves');
  t.ok(await waitFor(async () => /invalidation bus: not caught up at start; serving anyway/.test(await infoLog(d.server)), { timeoutMs: 10_000 }));
  t.match(await infoLog(d.server), /invalidation bus: Redis unreachable/);
  t.match((await system(d)).InvalidationBus, { Connected: false });
});
