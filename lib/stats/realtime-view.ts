// The `Host` document of /monitoring/realtime and /monitoring/average (document 1, "Monitoring
// statistics") built from the primary's sums. One builder for both: realtime reads the last
// closed second (divisor 1), an average reads a window's sum divided by its seconds, so counts
// and bytes are per-second values in both. Times are means of the interval in 0.01 ms, ratios in
// 0.01 %.
import { CACHE_RESULTS, HIT_RESULTS } from '../cache/policy/results.js';
import { cacheResultIndex, fieldIndex, HOST_GAUGE_INDEX, type CounterField, type HostGauge } from '../record/counter-layout.js';
import type { NodeGauges, Series, StatsAggregator } from './aggregate.js';
import type { SystemFigures } from './system.js';
import type { HostCensus } from './census.js';
import type { ProcessFigures } from './processes.js';

export type Interval = 'realtime' | 'min1' | 'min5';

/** What the document needs besides the sums. */
export interface ViewSource {
  stats: StatsAggregator;
  version: string;
  /** meta.name or the system's host name. */
  name: string;
  state(): 'Healthy' | 'Inactive' | 'Emergency';
  /** The hosts served now, in hosting[] order. */
  hosts(): string[];
  system(): SystemFigures;
  /** Management requests the ACL let through and refused since the start. */
  managementAccess(): { Allow: number; Deny: number };
  /** CPU time and start time of the primary and each worker (/metrics), when known. */
  processes?(): ProcessFigures[];
  /** The license's Status (Available, Expired, Invalid, None), when known. */
  licenseStatus?(): string;
  /** The Redis invalidation bus (ours), undefined when it is off. */
  bus?(): BusFigures | undefined;
  /** What the disk cache index holds for a host (a few seconds old); undefined before the first count. */
  census(name: string): HostCensus | undefined;
  /** The host's functions.statistics.directory when enabled, else undefined. */
  directoryStats(name: string): { depth: number; accum: boolean } | undefined;
  now?: () => number;
}

/** How far the node is behind the Redis invalidation bus (lib/primary/fleet/bus.ts). */
export interface BusFigures {
  Connected: boolean;
  /** Entries after this node's position (counted up to 10000). */
  Pending: number;
  /** Seconds since the oldest entry not applied yet was appended; 0 when none. */
  LagSeconds: number;
  Applied: number;
  Appended: number;
  Position: string;
}

/** Document 1's cache result list of HttpRequestHitSum (ours adds TCP_DENY: the hook ended it). */
const HIT_SUM_RESULTS = CACHE_RESULTS;
const CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

const round = (v: number, digits = 3): number => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

/** Reader of one interval's values of a series. */
class Reading {
  constructor(private readonly v: Float64Array, readonly seconds: number) {}
  raw(f: CounterField): number { return this.v[fieldIndex(f)]!; }
  /** A count or a byte size per second of the interval. */
  rate(f: CounterField): number { return round(this.raw(f) / this.seconds); }
  result(r: (typeof CACHE_RESULTS)[number]): number { return this.v[cacheResultIndex(r)]!; }
  /** A mean time in 0.01 ms: a sum of ms over a count. */
  time(sum: CounterField, count: number): number { return count > 0 ? Math.round((this.raw(sum) / count) * 100) : 0; }
}

function reading(s: Series, interval: Interval): Reading {
  if (interval === 'realtime') return new Reading(s.second, 1);
  const w = interval === 'min1' ? s.min1 : s.min5;
  return new Reading(w.sum, w.seconds);
}

/** The Origin* and Client* members, RequestHitRatio and ByteHitRatio (Host and VirtualHost). */
function traffic(r: Reading, g: Float64Array): Record<string, number> {
  const gauge = (n: HostGauge): number => g[HOST_GAUGE_INDEX[n]]!;
  const out: Record<string, number> = {};
  out.OriginSession = gauge('originSessions');
  out.OriginActiveSession = gauge('originActive');
  out.OriginInbound = r.rate('originBytesReceived');
  out.OriginOutbound = r.rate('originBytesSent');
  out.OriginReqCount = r.rate('originRequests');
  const originAnswered = r.raw('originRequests') - r.raw('originUnanswered');
  out.OriginResTotalCount = round(originAnswered / r.seconds);
  out.OriginResTotalTimeRes = r.time('originFirstByteMs', originAnswered);
  out.OriginResTotalTimeComplete = r.time('originCompleteMs', r.raw('originRequests'));
  for (const c of CLASSES) {
    const n = r.raw(`originResponses${c}`);
    out[`OriginRes${c}Count`] = r.rate(`originResponses${c}`);
    out[`OriginRes${c}TimeRes`] = r.time(`originFirstByteMs${c}`, n);
    out[`OriginRes${c}TimeComplete`] = r.time(`originCompleteMs${c}`, n);
  }
  out.ClientSession = gauge('clientSessions');
  out.ClientActiveSession = gauge('clientActive');
  out.ClientInbound = round((r.raw('requestHeadBytes') + r.raw('requestBodyBytes')) / r.seconds);
  const clientOut = r.raw('responseHeadBytes') + r.raw('responseBodyBytes');
  out.ClientOutbound = round(clientOut / r.seconds);
  out.ClientReqCount = r.rate('requests');
  const answered = r.raw('requests') - r.raw('unanswered');
  out.ClientResTotalCount = round(answered / r.seconds);
  out.ClientResTotalTimeRes = r.time('firstByteMs', answered);
  out.ClientResTotalTimeComplete = r.time('totalMs', r.raw('requests'));
  for (const c of CLASSES) {
    const n = r.raw(`responses${c}`);
    out[`ClientRes${c}Count`] = r.rate(`responses${c}`);
    out[`ClientRes${c}TimeRes`] = r.time(`firstByteMs${c}`, n);
    out[`ClientRes${c}TimeComplete`] = r.time(`totalMs${c}`, n);
  }
  const requests = r.raw('requests');
  let hits = 0;
  for (const h of HIT_RESULTS) hits += r.result(h);
  out.RequestHitRatio = requests > 0 ? Math.round((hits / requests) * 10000) : 0;
  // Document 1: (client outbound - origin inbound) / client outbound; negative when the origin
  // sent more than the clients took (clients that left early, objects fetched but not yet asked).
  out.ByteHitRatio = clientOut > 0 ? Math.round(((clientOut - r.raw('originBytesReceived')) / clientOut) * 10000) : 0;
  return out;
}

/** Document 1 ServiceAccess: transactions access control let through and refused (redirects included). */
function serviceAccess(r: Reading): Record<string, number> {
  return { Allow: r.rate('accessAllow'), Deny: r.rate('accessDeny') };
}


/** The 5-minute sums of document 1 (HttpCountSum, HttpRequestHitSum): plain counts, no division. */
function sums(s: Series): Record<string, Record<string, number>> {
  const v = s.min5.sum;
  const f = (n: CounterField): number => v[fieldIndex(n)]!;
  const count: Record<string, number> = {
    OriginReqCount: f('originRequests'),
    OriginResTotalCount: f('originRequests') - f('originUnanswered'),
  };
  for (const c of CLASSES) count[`OriginRes${c}Count`] = f(`originResponses${c}`);
  count.ClientReqCount = f('requests');
  count.ClientResTotalCount = f('requests') - f('unanswered');
  for (const c of CLASSES) count[`ClientRes${c}Count`] = f(`responses${c}`);
  const hit: Record<string, number> = {};
  for (const res of HIT_SUM_RESULTS) hit[res] = v[cacheResultIndex(res)]!;
  return { HttpCountSum: count, HttpRequestHitSum: hit };
}

/** One statistics directory of ClientTraffic.Traffic[]: `/` is the whole host. */
function trafficEntry(path: string, s: Series, r: Reading): Record<string, unknown> {
  const sum = s.min5.sum;
  const group = (count: CounterField, completed: CounterField | undefined, timeRes: CounterField, timeComplete: CounterField, n: number) => ({
    CountSum: sum[fieldIndex(count)]!,
    Count: r.rate(count),
    CompletedSum: sum[fieldIndex(completed ?? 'completed')]!,
    Completed: r.rate(completed ?? 'completed'),
    TimeRes: r.time(timeRes, n),
    TimeComplete: r.time(timeComplete, n),
  });
  const requests = r.raw('requests');
  let hits = 0;
  for (const h of HIT_RESULTS) hits += r.result(h);
  const hitNow: Record<string, number> = {};
  const hitSum: Record<string, number> = {};
  for (const res of HIT_SUM_RESULTS) {
    hitNow[res] = round(r.result(res) / r.seconds);
    hitSum[res] = sum[cacheResultIndex(res)]!;
  }
  const answered = requests - r.raw('unanswered');
  const response: Record<string, unknown> = { ResTotal: group('requests', undefined, 'firstByteMs', 'totalMs', answered) };
  for (const c of CLASSES) response[`Res${c}`] = group(`responses${c}`, `completed${c}`, `firstByteMs${c}`, `totalMs${c}`, r.raw(`responses${c}`));
  return {
    RequestHitRatio: requests > 0 ? Math.round((hits / requests) * 10000) : 0,
    Path: path,
    HttpReqCountSum: sum[fieldIndex('requests')]!,
    HttpReqCount: r.rate('requests'),
    HttpReqHeaderSize: r.rate('requestHeadBytes'),
    HttpReqBodySize: r.rate('requestBodyBytes'),
    HttpResHeaderSize: r.rate('responseHeadBytes'),
    HttpResBodySize: r.rate('responseBodyBytes'),
    Response: response,
    SSL: { RecvSize: r.rate('tlsInBytes'), SendSize: r.rate('tlsOutBytes') },
    RequestHit: hitNow,
    RequestHitSum: hitSum,
  };
}

/** The host's Disk group: its objects in the disk cache, in all and per cache disk. */
function diskGroup(c: HostCensus | undefined, paths: string[]): Record<string, unknown> {
  return {
    FileCount: c?.files ?? 0, Size: c?.bytes ?? 0,
    Purged: c?.purged ?? 0, Expired: c?.expired ?? 0, HardPurged: c?.hardPurged ?? 0,
    Storage: paths.map((p, i) => ({ Index: i, Path: p, FileCount: c?.disks.get(i)?.files ?? 0, Size: c?.disks.get(i)?.bytes ?? 0 })),
  };
}

function virtualHost(src: ViewSource, name: string, g: Float64Array, interval: Interval, now: number): Record<string, unknown> {
  const s = src.stats.series(name);
  const r = reading(s, interval);
  const census = src.census(name);
  const gauge = (n: HostGauge): number => g[HOST_GAUGE_INDEX[n]]!;
  const denied = r.result('TCP_DENIED');
  const vh: Record<string, unknown> = {
    Name: name, Uptime: Math.floor((now - s.since) / 1000), ...traffic(r, g),
    Memory: gauge('memoryBytes'),
    SecuredMemory: r.rate('memoryEvictedBytes'),
    FileTotal: census?.files ?? 0,
    FileOpened: gauge('filesOpen'),
    FileInstance: gauge('memoryObjects'),
    WaitingFiles2Delete: census?.waitingDelete ?? 0,
    ClientHttpReqBypass: r.rate('bypassed'),
    ClientHttpReqDenied: round(denied / r.seconds),
  };
  if (interval === 'min5') {
    vh.ClientHttpReqBypassSum = s.min5.sum[fieldIndex('bypassed')]!;
    vh.ClientHttpReqDeniedSum = s.min5.sum[cacheResultIndex('TCP_DENIED')]!;
  }
  let hits = 0;
  for (const h of HIT_RESULTS) hits += r.result(h);
  return {
    ...vh,
    Disk: diskGroup(census, src.system().Storage.Disk.map((d) => d.Path)),
    Session: {
      Client: gauge('clientSessions'), ClientActive: gauge('clientActive'),
      Origin: gauge('originSessions'), OriginActive: gauge('originActive'), OriginQueued: gauge('originQueued'),
    },
    Cached: {
      MemoryBytes: gauge('memoryBytes'), MemoryObjects: gauge('memoryObjects'),
      HitCount: round(hits / r.seconds), MissCount: round((r.raw('requests') - r.raw('unanswered') - hits - r.result('TCP_NONE') - denied) / r.seconds),
    },
    CacheFileEvent: {
      Create: r.rate('fileCreated'), Swap: r.rate('memoryEvictedObjects'), Erase: r.rate('fileErased'),
      Purge: r.rate('filePurged'), Expire: r.rate('fileExpired'), SwapBytes: r.rate('memoryEvictedBytes'),
    },
    OriginTraffic: {
      Inbound: r.rate('originBytesReceived'), Outbound: r.rate('originBytesSent'), ReqCount: r.rate('originRequests'),
      Failed: r.rate('originErrors'), Retried: r.rate('originRetried'),
    },
    ClientTraffic: clientTraffic(src, name, s, r, interval),
    // Requests sent to the origin by a bypass rule (pattern or no-cache request): per second, since
    // the primary started, and their client bytes in and out per second.
    UrlBypass: {
      HttpReqCount: r.rate('urlBypass'), HttpReqCountSum: s.total[fieldIndex('urlBypass')]!,
      Inbound: r.rate('urlBypassInBytes'), Outbound: r.rate('urlBypassOutBytes'),
    },
  };
}

/**
 * ClientTraffic: `/` (the whole host) and, with directory statistics, each directory counted so
 * far; Depth and Accum are the setting's (0 and 0 without it), HttpsTraffic the bytes over TLS.
 */
function clientTraffic(src: ViewSource, name: string, s: Series, r: Reading, interval: Interval): Record<string, unknown> {
  const cfg = src.directoryStats(name);
  const entries = [trafficEntry('/', s, r)];
  if (cfg !== undefined) {
    for (const dir of src.stats.directories(name)) {
      const d = src.stats.directory(name, dir);
      entries.push(trafficEntry(dir, d, reading(d, interval)));
    }
  }
  return {
    Depth: cfg?.depth ?? 0, Accum: cfg?.accum === true ? 1 : 0,
    HttpsTraffic: round((r.raw('tlsInBytes') + r.raw('tlsOutBytes')) / r.seconds),
    TrafficCount: entries.length,
    Traffic: entries,
  };
}

/** The System member: the kernel's figures (sampled) with the workers' gauges and the node's counts. */
function systemMembers(src: ViewSource, r: Reading, g: NodeGauges): Record<string, unknown> {
  const k = src.system();
  const all = (n: HostGauge): number => g.all[HOST_GAUGE_INDEX[n]]!;
  const disks = k.Storage.Disk.map((d, i) => {
    // The directory is there but a worker's store excluded the disk after write failures.
    const invalid = d.Status === 'Normal' && (g.disks[i] ?? []).some((st) => st === 'Invalid');
    return invalid ? { ...d, Status: 'Invalid' } : d;
  });
  return {
    CPU: k.CPU,
    Mem: k.Mem,
    Storage: { Disk: disks },
    ServerSocket: { Total: g.serverSockets, Established: g.serverBusy, Accepted: r.rate('clientAccepted'), Closed: r.rate('clientClosed') },
    ClientSocket: { Total: all('originSessions'), Established: all('originActive'), Connected: r.rate('originConnected'), Closed: r.rate('originClosed') },
    TCPSocket: k.TCPSocket,
    EQ: Math.max(k.EQ, g.eventLoopLag),
    RQ: all('originQueued'),
    WaitingFiles2Write: g.waitingWrites,
    ServiceAccess: serviceAccess(r),
    // Ours: the management API's ACL (document 1's ServiceAccess is the service's access control).
    ManagementAccess: src.managementAccess(),
    SystemLoadAverage: k.SystemLoadAverage,
    URLRewrite: r.rate('urlRewrites'),
    ...bus(src),
  };
}

/** Ours: System.InvalidationBus, present when the bus is on. */
function bus(src: ViewSource): { InvalidationBus?: BusFigures } {
  const b = src.bus?.();
  return b === undefined ? {} : { InvalidationBus: b };
}

/** The whole `Host` document of one interval. */
export function hostDocument(src: ViewSource, interval: Interval): Record<string, unknown> {
  const now = (src.now ?? Date.now)();
  const node = src.stats.node;
  const gauges = src.stats.nodeGauges();
  const r = reading(node, interval);
  const host: Record<string, unknown> = {
    Version: src.version,
    Name: src.name,
    State: src.state(),
    Uptime: Math.floor((now - src.stats.startedAt) / 1000),
    ...traffic(r, gauges.all),
  };
  if (interval === 'min5') Object.assign(host, sums(node));
  host.System = systemMembers(src, r, gauges);
  host.VirtualHost = src.hosts().map((h) => virtualHost(src, h, src.stats.hostGauges(h), interval, now));
  return { Host: host };
}
