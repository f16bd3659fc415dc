// The `Host` document of /monitoring/realtime and /monitoring/average (document 1, "Monitoring
// statistics") built from the primary's sums. One builder for both: realtime reads the last
// closed second (divisor 1), an average reads a window's sum divided by its seconds, so counts
// and bytes are per-second values in both. Times are means of the interval in 0.01 ms, ratios in
// 0.01 %.
import { CACHE_RESULTS } from '../cache/policy/results.js';
import { cacheResultIndex, fieldIndex, type CounterField } from '../pipeline/counters.js';
import type { Series, StatsAggregator } from './aggregate.js';
import type { SystemFigures } from './system.js';

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
  now?: () => number;
}

/** Document 1's cache result list of HttpRequestHitSum (ours adds TCP_DENY: the hook ended it). */
const HIT_SUM_RESULTS = CACHE_RESULTS;
const HITS = ['TCP_HIT', 'TCP_IMS_HIT', 'TCP_REFRESH_HIT', 'TCP_REF_FAIL_HIT', 'TCP_NEGATIVE_HIT', 'TCP_REDIRECT_HIT'] as const;
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
function traffic(r: Reading): Record<string, number> {
  const out: Record<string, number> = {};
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
  for (const h of HITS) hits += r.result(h);
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

/** The one statistics directory (`/`) of ClientTraffic.Traffic[]: the host's client side. */
function trafficEntry(s: Series, r: Reading): Record<string, unknown> {
  const sum = s.min5.sum;
  const group = (count: CounterField, completed: CounterField | undefined, timeRes: CounterField, timeComplete: CounterField, n: number) => ({
    CountSum: sum[fieldIndex(count)]!,
    Count: r.rate(count),
    CompletedSum: completed === undefined ? sum[fieldIndex('requests')]! - sum[fieldIndex('incomplete')]! : sum[fieldIndex(completed)]!,
    Completed: completed === undefined ? round((r.raw('requests') - r.raw('incomplete')) / r.seconds) : r.rate(completed),
    TimeRes: r.time(timeRes, n),
    TimeComplete: r.time(timeComplete, n),
  });
  const requests = r.raw('requests');
  let hits = 0;
  for (const h of HITS) hits += r.result(h);
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
    Path: '/',
    HttpReqCountSum: sum[fieldIndex('requests')]!,
    HttpReqCount: r.rate('requests'),
    HttpReqHeaderSize: r.rate('requestHeadBytes'),
    HttpReqBodySize: r.rate('requestBodyBytes'),
    HttpResHeaderSize: r.rate('responseHeadBytes'),
    HttpResBodySize: r.rate('responseBodyBytes'),
    Response: response,
    // TLS is not served yet (the TLS work): nothing is received or sent over it.
    SSL: { RecvSize: 0, SendSize: 0 },
    RequestHit: hitNow,
    RequestHitSum: hitSum,
  };
}

function virtualHost(name: string, s: Series, interval: Interval, now: number): Record<string, unknown> {
  const r = reading(s, interval);
  const vh: Record<string, unknown> = { Name: name, Uptime: Math.floor((now - s.since) / 1000), ...traffic(r) };
  // Refused by access control (403, TCP_DENIED); redirects are not denials here.
  vh.ClientHttpReqDenied = round(r.result('TCP_DENIED') / r.seconds);
  if (interval === 'min5') vh.ClientHttpReqDeniedSum = s.min5.sum[cacheResultIndex('TCP_DENIED')]!;
  return {
    ...vh,
    // Requests sent to the origin by a bypass rule (pattern or no-cache request): per second, and
    // since the primary started.
    UrlBypass: { HttpReqCount: r.rate('urlBypass'), HttpReqCountSum: s.total[fieldIndex('urlBypass')]! },
    ClientTraffic: {
      // Directory statistics are not configurable yet: one entry, `/`, at depth 0, not accumulated.
      Depth: 0, Accum: 0, HttpsTraffic: 0, TrafficCount: 1,
      Traffic: [trafficEntry(s, r)],
    },
  };
}

/** The whole `Host` document of one interval. */
export function hostDocument(src: ViewSource, interval: Interval): Record<string, unknown> {
  const now = (src.now ?? Date.now)();
  const node = src.stats.node;
  const host: Record<string, unknown> = {
    Version: src.version,
    Name: src.name,
    State: src.state(),
    Uptime: Math.floor((now - src.stats.startedAt) / 1000),
    ...traffic(reading(node, interval)),
  };
  if (interval === 'min5') Object.assign(host, sums(node));
  const r = reading(node, interval);
  host.System = { ...src.system(), ServiceAccess: serviceAccess(r), URLRewrite: r.rate('urlRewrites') };
  host.VirtualHost = src.hosts().map((h) => virtualHost(h, src.stats.series(h), interval, now));
  return { Host: host };
}
