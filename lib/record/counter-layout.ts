// The layout of the statistics counters: which double of a row counts what, how long a row is,
// and the gauges sent beside it. The workers count into it (lib/pipeline/parts/counters.ts) and the
// primary reads it (lib/stats, lib/graph), so it lives below both and imports nothing of either:
// a row is COUNTER_FIELDS, then one count per CacheResult, then the two time histograms.
import { CACHE_RESULT_INDEX, CACHE_RESULTS } from '../cache/policy/results.js';

export const COUNTER_FIELDS = [
  /** Client transactions that ended (every one, answered or not). */
  'requests',
  'responses1xx', 'responses2xx', 'responses3xx', 'responses4xx', 'responses5xx',
  /** Ended before any byte of an answer went out (status 0): requests = responses + this. */
  'unanswered',
  /** Ended without the whole answer out (client abort, broken body): completed false. */
  'incomplete',
  'requestHeadBytes', 'requestBodyBytes', 'responseHeadBytes', 'responseBodyBytes',
  /** Sum of firstByteMs over the answered transactions (divide by the responses). */
  'firstByteMs',
  /** Sum of totalMs over all transactions (divide by requests). */
  'totalMs',
  /** Handed to the URL's owner worker (hash balance); the client side is counted here. */
  'handedOff',
  /** Served for a sibling worker; counted nowhere else (the sibling counted the client side). */
  'fromSibling',
  /** Origin exchanges that ended, those that ended on an error, those tried on another address. */
  'originRequests', 'originErrors', 'originRetried',
  /** Bytes sent to and received from origins, heads included. */
  'originBytesSent', 'originBytesReceived',
  // Added for the statistics documents (document 1 asks for per-class times and completions).
  /** Per status class sent: sum of firstByteMs, sum of totalMs, answers that went out whole. */
  'firstByteMs1xx', 'firstByteMs2xx', 'firstByteMs3xx', 'firstByteMs4xx', 'firstByteMs5xx',
  'totalMs1xx', 'totalMs2xx', 'totalMs3xx', 'totalMs4xx', 'totalMs5xx',
  'completed1xx', 'completed2xx', 'completed3xx', 'completed4xx', 'completed5xx',
  /** Origin exchanges by the origin's status class; those with no answer (status 0). */
  'originResponses1xx', 'originResponses2xx', 'originResponses3xx', 'originResponses4xx', 'originResponses5xx',
  'originUnanswered',
  /** Origin sums: request to first byte (answered ones), request to the end (every one). */
  'originFirstByteMs', 'originCompleteMs',
  'originFirstByteMs1xx', 'originFirstByteMs2xx', 'originFirstByteMs3xx', 'originFirstByteMs4xx', 'originFirstByteMs5xx',
  'originCompleteMs1xx', 'originCompleteMs2xx', 'originCompleteMs3xx', 'originCompleteMs4xx', 'originCompleteMs5xx',
  /** URL rewrites applied (document 1 URLRewrite); one transaction may count several. */
  'urlRewrites',
  /** Transactions access control let through / denied or redirected (document 1 ServiceAccess). */
  'accessAllow', 'accessDeny',
  /** Sent to the origin by a bypass rule (pattern or no-cache request), nothing stored: UrlBypass. */
  'urlBypass',
  // Added for the members of issue 12 (sessions, sockets, bypass, TLS, cache events).
  /** Client connections accepted and closed (row 0: a connection has no host). */
  'clientAccepted', 'clientClosed',
  /** Origin connections opened and closed (row 0: undici's pools do not say for which host). */
  'originConnected', 'originClosed',
  /** Passed to the origin without the cache, for any reason (TCP_NONE with an origin exchange): ClientHttpReqBypass. */
  'bypassed',
  /** Client bytes in and out of the transactions a bypass rule sent to the origin (urlBypass). */
  'urlBypassInBytes', 'urlBypassOutBytes',
  /** Bytes received from and sent to clients over TLS (ClientTraffic SSL). */
  'tlsInBytes', 'tlsOutBytes',
  /** Answers that went out whole, every class (ResTotal.Completed). */
  'completed',
  /** Bytes and objects the memory cache evicted to make room (SecuredMemory). */
  'memoryEvictedBytes', 'memoryEvictedObjects',
  /** Cached objects written to disk, erased, purged, expired (CacheFileEvent; lib/cache/events.ts). */
  'fileCreated', 'fileErased', 'filePurged', 'fileExpired',
  /** Client transactions over TLS (HTTP/1.1 and HTTP/2 on the TLS ports); their bytes are tlsInBytes/tlsOutBytes. */
  'tlsRequests',
] as const;

/**
 * Upper bounds (ms) of the response-time histograms (client totalMs, origin completeMs). A row
 * keeps one count per bucket (not cumulative) plus one past the last bound; /metrics makes
 * them cumulative. Finding the bucket is at most 12 comparisons, no allocation.
 */
export const TIME_BUCKETS_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000] as const;
const BUCKETS = TIME_BUCKETS_MS.length + 1;

export type CounterField = (typeof COUNTER_FIELDS)[number];

/** Where each field sits in a row. */
export const FIELD_INDEX = Object.fromEntries(COUNTER_FIELDS.map((f, i) => [f, i])) as Record<CounterField, number>;
/** Where the counts per cache result start in a row. */
export const RESULTS_AT = COUNTER_FIELDS.length;
/** Where the client and origin time histograms start in a row. */
export const CLIENT_HISTOGRAM_AT = RESULTS_AT + CACHE_RESULTS.length;
export const ORIGIN_HISTOGRAM_AT = CLIENT_HISTOGRAM_AT + BUCKETS;

/** Doubles per row: the fields, one per cache result (CACHE_RESULTS order), the two histograms. */
export const STRIDE = ORIGIN_HISTOGRAM_AT + BUCKETS;

/** Joins a host and a statistics directory in the name of a directory row (lib/pipeline/parts/directory-stats.ts). */
export const DIRECTORY_SEPARATOR = '\u0000';

/** Where a named field sits in a row (for readers of a snapshot). */
export function fieldIndex(name: CounterField): number {
  return FIELD_INDEX[name];
}

export function cacheResultIndex(result: (typeof CACHE_RESULTS)[number]): number {
  return RESULTS_AT + CACHE_RESULT_INDEX[result];
}

/**
 * Gauges of a row, sent as they are (not as deltas): client transactions in progress (received,
 * not finished) and, of those, the ones whose answer has started (ClientSession,
 * ClientActiveSession). Kept by increments at receive, routing, the status line and finish.
 */
const GAUGE_FIELDS = ['clientSessions', 'clientActive'] as const;
export const GAUGE_STRIDE = GAUGE_FIELDS.length;

/**
 * The gauges a worker sends per host row: GAUGE_FIELDS, then what the statistics reporter reads
 * from the host's runtime once a second: origin connections open and carrying an exchange,
 * origin requests queued for a connection, memory cache bytes and objects of the host, and its
 * body files open for reading or being written.
 */
const HOST_GAUGES = [...GAUGE_FIELDS, 'originSessions', 'originActive', 'originQueued', 'memoryBytes', 'memoryObjects', 'filesOpen'] as const;
export type HostGauge = (typeof HOST_GAUGES)[number];
export const HOST_GAUGE_STRIDE = HOST_GAUGES.length;
export const HOST_GAUGE_INDEX = Object.fromEntries(HOST_GAUGES.map((g, i) => [g, i])) as Record<HostGauge, number>;
