// The primary's sums of two workers' counter deltas: what the documents and /metrics show adds
// up across workers, across a worker restart, and over the averaging windows (manual ticks
// stand for the primary's 1-second clock; the wall clock is injected).
import t from 'tap';
import { Counters } from '../../lib/pipeline/parts/counters.js';
import { cacheResultIndex, fieldIndex, HOST_GAUGE_INDEX } from '../../lib/record/counter-layout.js';
import type { StatsDeltasMessage } from '../../lib/ipc/messages.js';
import type { TransactionRecord } from '../../lib/pipeline/parts/transaction.js';
import { StatsAggregator } from '../../lib/stats/aggregate.js';
import { hostDocument, type ViewSource } from '../../lib/stats/realtime-view.js';
import { metricsText } from '../../lib/stats/prometheus.js';
import { StatsReporter, type WorkerProbe } from '../../lib/worker/stats-reporter.js';
import type { SystemFigures } from '../../lib/stats/system.js';

let nextWorker = 1;

/** A worker: its counters and the reporter that hands their deltas to the primary. */
function worker(agg: StatsAggregator): { counters: Counters; slot: number; report(): void } {
  const counters = new Counters();
  const slot = counters.slotOf('a.test');
  const id = nextWorker++;
  const reporter = new StatsReporter((m) => agg.onDeltas(m, id), undefined, counters);
  return { counters, slot, report: () => reporter.report() };
}

function tx(slot: number, status: number, result: TransactionRecord['cacheResult'], bytes: number, totalMs = 4): TransactionRecord {
  return {
    host: { counterSlot: slot }, fromSibling: false, bypass: 0, rewrites: 0, access: 0, status, firstByteMs: 1, totalMs, completed: true,
    requestHeadBytes: 50, requestBodyBytes: 0, responseHeadBytes: 100, responseBodyBytes: bytes, handedTo: -1, cacheResult: result,
    connection: { tls: undefined },
  } as unknown as TransactionRecord;
}

const system = { CPU: {}, Mem: {}, Storage: { Disk: [] }, TCPSocket: {}, EQ: 0, SystemLoadAverage: {} } as unknown as SystemFigures;

function source(agg: StatsAggregator, now: () => number): ViewSource {
  return { stats: agg, version: 't', name: 'node', state: () => 'Healthy', hosts: () => ['a.test'], system: () => system, managementAccess: () => ({ Allow: 0, Deny: 0 }), census: () => undefined, directoryStats: () => undefined, now };
}

type Doc = { Host: Record<string, number> & { VirtualHost: Array<Record<string, number>>; HttpCountSum: Record<string, number>; HttpRequestHitSum: Record<string, number> } };

t.test('counts of two workers add up in the realtime document, the averages and the 5-minute sums', async (t) => {
  let clock = 1_000_000;
  const agg = new StatsAggregator(() => clock);
  const w1 = worker(agg), w2 = worker(agg);
  for (let i = 0; i < 3; i++) w1.counters.count(tx(w1.slot, 200, 'TCP_HIT', 1000));
  w2.counters.count(tx(w2.slot, 200, 'TCP_MISS', 1000));
  w2.counters.count(tx(w2.slot, 404, 'TCP_MISS', 10));
  w2.counters.countOrigin(w2.slot, false, false, 80, 1200, 200, 3, 5);
  w2.counters.countOrigin(w2.slot, false, false, 80, 110, 404, 2, 2);
  w1.report();
  w2.report();
  agg.tick();
  clock += 1000;
  const src = source(agg, () => clock);
  const rt = hostDocument(src, 'realtime') as Doc;
  t.equal(rt.Host.ClientReqCount, 5, 'five requests in the last second');
  t.equal(rt.Host.ClientRes2xxCount, 4);
  t.equal(rt.Host.ClientRes4xxCount, 1);
  t.equal(rt.Host.ClientOutbound, 5 * 100 + 4 * 1000 + 10);
  t.equal(rt.Host.ClientInbound, 5 * 50);
  t.equal(rt.Host.OriginReqCount, 2);
  t.equal(rt.Host.OriginInbound, 1310);
  t.equal(rt.Host.OriginRes4xxCount, 1);
  t.equal(rt.Host.RequestHitRatio, 6000, '3 hits of 5 requests: 60.00 %');
  t.equal(rt.Host.ByteHitRatio, Math.round(((4510 - 1310) / 4510) * 10000));
  t.equal(rt.Host.ClientResTotalTimeComplete, 400, 'mean 4 ms in 0.01 ms');
  t.equal(rt.Host.OriginRes2xxTimeRes, 300);
  t.equal(rt.Host.VirtualHost[0]!.ClientReqCount, 5, 'the host has them all');
  t.equal(rt.Host.Uptime, 1);

  // Nothing more comes: the next second is empty, the averages still hold the counts.
  agg.tick();
  const next = hostDocument(src, 'realtime') as Doc;
  t.equal(next.Host.ClientReqCount, 0, 'the 1-second value is only the last second');
  const min1 = hostDocument(src, 'min1') as Doc;
  t.equal(Math.round(min1.Host.ClientReqCount * 60), 5, 'the 1-minute average is per second over 60 s');
  const min5 = hostDocument(src, 'min5') as Doc;
  t.equal(min5.Host.HttpCountSum.ClientReqCount, 5);
  t.equal(min5.Host.HttpCountSum.ClientRes4xxCount, 1);
  t.equal(min5.Host.HttpCountSum.OriginReqCount, 2);
  t.equal(min5.Host.HttpRequestHitSum.TCP_HIT, 3);
  t.equal(min5.Host.HttpRequestHitSum.TCP_MISS, 2);
  t.notOk('HttpCountSum' in (min1.Host as object), 'sums only in the 5-minute statistics');

  // 60 more seconds: out of the 1-minute window, still in the 5-minute one.
  for (let i = 0; i < 60; i++) agg.tick();
  t.equal((hostDocument(src, 'min1') as Doc).Host.ClientReqCount, 0, 'gone from the 1-minute average');
  t.equal((hostDocument(src, 'min5') as Doc).Host.HttpCountSum.ClientReqCount, 5, 'still in the 5-minute sums');
  for (let i = 0; i < 300; i++) agg.tick();
  t.equal((hostDocument(src, 'min5') as Doc).Host.HttpCountSum.ClientReqCount, 0, 'gone after 5 minutes');
  t.match(metricsText(src, undefined), /^svc_client_requests_total\{vhost="a\.test"\} 5$/m, 'the cumulative counter keeps them');
});

t.test('a restarted worker never makes a counter go backwards or double', async (t) => {
  const agg = new StatsAggregator();
  const w1 = worker(agg);
  let w2 = worker(agg);
  const requests = (): number => agg.node.total[fieldIndex('requests')]!;
  for (let i = 0; i < 4; i++) w2.counters.count(tx(w2.slot, 200, 'TCP_HIT', 10));
  w1.counters.count(tx(w1.slot, 200, 'TCP_HIT', 10));
  w1.report(); w2.report(); agg.tick();
  t.equal(requests(), 5);
  // The second worker dies and a new one starts counting from zero.
  w2 = worker(agg);
  w2.report(); agg.tick();
  t.equal(requests(), 5, 'a fresh worker (all zero) takes nothing away');
  w2.counters.count(tx(w2.slot, 200, 'TCP_MISS', 10));
  w1.counters.count(tx(w1.slot, 200, 'TCP_MISS', 10));
  w2.report(); w1.report(); agg.tick();
  t.equal(requests(), 7, 'only what was counted since is added');
  w1.report(); w2.report(); agg.tick();
  t.equal(requests(), 7, 'a report with nothing new adds nothing');
  t.equal(agg.node.total[cacheResultIndex('TCP_MISS')], 2);
  t.equal(agg.series('a.test').total[fieldIndex('requests')], 7, 'the host row too');
});

t.test('a reporter with nothing counted sends zero deltas and the gauges as they are', async (t) => {
  const sent: StatsDeltasMessage[] = [];
  const counters = new Counters();
  counters.slotOf('a.test');
  counters.begin();
  const r = new StatsReporter((m) => sent.push(m), undefined, counters);
  r.report();
  t.equal(sent.length, 1);
  t.ok(sent[0]!.values.every((v) => v === 0), 'no deltas');
  t.equal(sent[0]!.gauges[HOST_GAUGE_INDEX.clientSessions], 1, 'one transaction in progress, not routed yet (row 0)');
  await r.flush();
  t.equal(sent.length, 2, 'the flush sends the last one');
});

t.test('what the reporter reads from the worker reaches the document: sessions, connections, memory, files, writer queue, disks', async (t) => {
  const agg = new StatsAggregator(() => 0);
  const counters = new Counters();
  const slot = counters.slotOf('a.test');
  const probe: WorkerProbe = {
    origin: (h) => (h === 'a.test' ? { open: 3, busy: 2, queued: 4 } : undefined),
    memory: (h) => (h === 'a.test' ? { bytes: 5000, objects: 2, evictedBytes: 700, evictedObjects: 1 } : undefined),
    filesOpen: () => 1, busyConnections: () => 1, waitingWrites: () => 6, disks: () => ['Normal'],
  };
  counters.begin();
  const row = counters.routed(slot);
  counters.answering(row);
  const r1 = new StatsReporter((m) => agg.onDeltas(m, 1), probe, counters);
  const r2 = new StatsReporter((m) => agg.onDeltas(m, 2), probe, new Counters());
  r1.report();
  r2.report();
  agg.tick();
  const h = (hostDocument(source(agg, () => 0), 'realtime') as { Host: Record<string, any> }).Host;
  const v = h.VirtualHost[0];
  t.same([v.ClientSession, v.ClientActiveSession, v.OriginSession, v.OriginActiveSession], [1, 1, 3, 2], 'one worker has the host');
  t.same([v.Memory, v.FileInstance, v.FileOpened, v.SecuredMemory], [5000, 2, 1, 700]);
  t.same(v.Session, { Client: 1, ClientActive: 1, Origin: 3, OriginActive: 2, OriginQueued: 4 });
  t.equal(h.System.RQ, 4, 'RQ: origin requests queued for a connection');
  t.equal(h.System.WaitingFiles2Write, 12, 'both workers\' writer queues');
  t.equal(h.System.ServerSocket.Established, 2);
  t.same(h.System.ClientSocket.Total, 3);
  counters.end(row, true);
  r1.report();
  agg.tick();
  const later = (hostDocument(source(agg, () => 0), 'realtime') as { Host: Record<string, any> }).Host.VirtualHost[0];
  t.same([later.ClientSession, later.ClientActiveSession], [0, 0], 'the transaction ended');
  t.equal(later.SecuredMemory, 0, 'evictions are counted once, as they happen');
  agg.workerGone(1);
  t.equal((hostDocument(source(agg, () => 0), 'realtime') as { Host: Record<string, any> }).Host.VirtualHost[0].OriginSession, 0,
    'a worker that exited takes its connections with it');
});

t.test('bytes over TLS count in SSL and HttpsTraffic', async (t) => {
  const agg = new StatsAggregator(() => 0);
  const counters = new Counters();
  const slot = counters.slotOf('a.test');
  const secure = { ...tx(slot, 200, 'TCP_HIT', 1000), connection: { tls: "TLS1.3" } } as unknown as TransactionRecord;
  counters.count(secure);
  counters.count(tx(slot, 200, 'TCP_HIT', 1000));
  new StatsReporter((m) => agg.onDeltas(m, 1), undefined, counters).report();
  agg.tick();
  const ct = (hostDocument(source(agg, () => 0), 'realtime') as { Host: Record<string, any> }).Host.VirtualHost[0].ClientTraffic;
  t.same(ct.Traffic[0].SSL, { RecvSize: 50, SendSize: 1100 }, 'the one TLS transaction only');
  t.equal(ct.HttpsTraffic, 1150);
});
