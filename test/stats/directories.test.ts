// Directory statistics (functions.statistics.directory): each transaction of a host that enables
// them is counted again in its statistics directories, which the document lists in
// ClientTraffic.Traffic[] after `/` (the whole host); the node's sums count it once.
import t from 'tap';
import { Counters } from '../../lib/pipeline/parts/counters.js';
import { fieldIndex } from '../../lib/record/counter-layout.js';
import { countDirectories, directoryStatsOf } from '../../lib/pipeline/parts/directory-stats.js';
import type { TransactionRecord } from '../../lib/pipeline/parts/transaction.js';
import { StatsAggregator } from '../../lib/stats/aggregate.js';
import { hostDocument, type ViewSource } from '../../lib/stats/realtime-view.js';
import { StatsReporter } from '../../lib/worker/stats-reporter.js';
import type { SystemFigures } from '../../lib/stats/system.js';

function tx(slot: number, url: string, bytes: number): TransactionRecord {
  return {
    connection: { tls: undefined }, bypass: 0, rewrites: 0, access: 0, url, host: { counterSlot: slot }, fromSibling: false, status: 200, firstByteMs: 1, totalMs: 2, completed: true,
    requestHeadBytes: 40, requestBodyBytes: 0, responseHeadBytes: 100, responseBodyBytes: bytes, handedTo: -1, cacheResult: 'TCP_HIT',
  } as unknown as TransactionRecord;
}

type Entry = { Path: string; HttpReqCountSum: number; HttpResBodySize: number };
type Doc = { Host: { ClientReqCount: number; VirtualHost: Array<{ ClientTraffic: { Depth: number; Accum: number; TrafficCount: number; Traffic: Entry[] } }> } };

function run(cfg: { depth: number; accum: boolean; max?: number }, urls: string[]): Doc {
  const counters = new Counters();
  const slot = counters.slotOf('a.test');
  const d = directoryStatsOf({ enable: true, depth: cfg.depth, accum: cfg.accum, maxDirectories: cfg.max ?? 64 })!;
  for (const u of urls) {
    const one = tx(slot, u, 1000);
    counters.count(one);
    countDirectories(d, counters, 'a.test', one);
  }
  const agg = new StatsAggregator(() => 0);
  new StatsReporter((m) => agg.onDeltas(m, 1), undefined, counters).report();
  agg.tick();
  const src: ViewSource = {
    stats: agg, version: 't', name: 'n', state: () => 'Healthy', hosts: () => ['a.test'],
    system: () => ({ CPU: {}, Mem: {}, Storage: { Disk: [] }, TCPSocket: {}, EQ: 0, SystemLoadAverage: {} }) as unknown as SystemFigures,
    managementAccess: () => ({ Allow: 0, Deny: 0 }), census: () => undefined,
    directoryStats: () => ({ depth: cfg.depth, accum: cfg.accum }), now: () => 0,
  };
  t.equal(agg.node.total[fieldIndex('requests')], urls.length, 'the node counts each request once');
  return hostDocument(src, 'min5') as Doc;
}

const urls = ['/img/a.jpg', '/img/x/b.jpg?v=1', '/img/x/y/c.jpg', '/css/s.css', '/top.html'];

t.test('without accumulation a request counts in its deepest directory up to the depth', async (t) => {
  const ct = run({ depth: 2, accum: false }, urls).Host.VirtualHost[0]!.ClientTraffic;
  t.equal(ct.Depth, 2);
  t.equal(ct.Accum, 0);
  const byPath = Object.fromEntries(ct.Traffic.map((e) => [e.Path, e.HttpReqCountSum]));
  t.same(byPath, { '/': 5, '/css/': 1, '/img/': 1, '/img/x/': 2 }, 'the query and the file name are not directories');
  t.equal(ct.TrafficCount, 4);
});

t.test('with accumulation a request counts in every level up to the depth', async (t) => {
  const ct = run({ depth: 3, accum: true }, urls).Host.VirtualHost[0]!.ClientTraffic;
  t.equal(ct.Accum, 1);
  const byPath = Object.fromEntries(ct.Traffic.map((e) => [e.Path, e.HttpReqCountSum]));
  t.same(byPath, { '/': 5, '/css/': 1, '/img/': 3, '/img/x/': 2, '/img/x/y/': 1 });
  const img = ct.Traffic.find((e) => e.Path === '/img/')!;
  t.equal(img.HttpResBodySize, 3000 / 300, 'bytes per second over the 5-minute window');
});

t.test('directories beyond maxDirectories count in / only', async (t) => {
  const ct = run({ depth: 1, accum: false, max: 1 }, ['/a/1', '/b/1', '/b/2']).Host.VirtualHost[0]!.ClientTraffic;
  t.same(ct.Traffic.map((e) => [e.Path, e.HttpReqCountSum]), [['/', 3], ['/a/', 1]]);
});
