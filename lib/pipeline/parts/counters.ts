// The worker's statistics counters: always on, updated by finish for every transaction with no
// allocation. One flat Float64Array, one row ("slot") per virtual host plus row 0 for the
// transactions no virtual host took (404, 400 ...); a row is COUNTER_FIELDS then one count per
// CacheResult. A transaction is counted in one row only: the worker's total is the sum of the
// rows, made when read (half the work per request of keeping a total row). Doubles count exactly
// up to 2^53, far beyond what a worker lives to see. The statistics work reads deltas
// (takeDeltas) once a second and ships them to the primary, so a restarted worker never makes a
// node total go backwards or count twice.
import { CACHE_RESULT_INDEX, CACHE_RESULTS } from '../../cache/policy/results.js';
import {
  CLIENT_HISTOGRAM_AT, FIELD_INDEX, GAUGE_STRIDE, ORIGIN_HISTOGRAM_AT, RESULTS_AT, STRIDE, TIME_BUCKETS_MS,
} from '../../record/counter-layout.js';
import type { RecordFields } from '../../record/transaction.js';

/**
 * What the counters read of a finished transaction: the record's fields and its host's row. A
 * shape of its own, so that the transaction (transaction.ts, whose time to first byte moves the
 * gauges here) is counted without this module naming it back.
 */
export interface Counted extends Omit<RecordFields, 'host'> {
  readonly host: { readonly counterSlot: number } | undefined;
}

const F = FIELD_INDEX;
const REQUESTS = F.requests;
const RESPONSES_1XX = F.responses1xx;
const UNANSWERED = F.unanswered;
const INCOMPLETE = F.incomplete;
const REQUEST_HEAD = F.requestHeadBytes;
const REQUEST_BODY = F.requestBodyBytes;
const RESPONSE_HEAD = F.responseHeadBytes;
const RESPONSE_BODY = F.responseBodyBytes;
const FIRST_BYTE = F.firstByteMs;
const TOTAL = F.totalMs;
const HANDED_OFF = F.handedOff;
const FROM_SIBLING = F.fromSibling;
const FIRST_BYTE_1XX = F.firstByteMs1xx;
const TOTAL_1XX = F.totalMs1xx;
const COMPLETED_1XX = F.completed1xx;
const URL_REWRITES = F.urlRewrites;
const ACCESS_ALLOW = F.accessAllow;
const URL_BYPASS = F.urlBypass;
const URL_BYPASS_IN = F.urlBypassInBytes;
const COMPLETED = F.completed;
const BYPASSED = F.bypassed;
const TLS_IN = F.tlsInBytes;
const TCP_NONE_AT = CACHE_RESULT_INDEX.TCP_NONE;
const TLS_REQUESTS = F.tlsRequests;

function bucketOf(ms: number): number {
  let i = 0;
  while (i < TIME_BUCKETS_MS.length && ms > TIME_BUCKETS_MS[i]!) i++;
  return i;
}

interface CounterDeltas {
  /** Host name of each row; row 0 ('') is the transactions no virtual host took. */
  hosts: string[];
  stride: number;
  /** Row r, field f: values[r * stride + f]; what was added since the previous takeDeltas. */
  values: Float64Array;
  /** The sum of the rows: the worker's total of each field. */
  total: Float64Array;
  /** Row r, gauge g: gauges[r * GAUGE_STRIDE + g]; the values now. */
  gauges: Float64Array;
}

export class Counters {
  values: Float64Array;
  /** GAUGE_FIELDS per row. */
  gauges: Float64Array;
  private shipped: Float64Array;
  private readonly slots = new Map<string, number>();
  private readonly names: string[] = [''];

  constructor(rows = 16) {
    this.values = new Float64Array(rows * STRIDE);
    this.shipped = new Float64Array(rows * STRIDE);
    this.gauges = new Float64Array(rows * GAUGE_STRIDE);
  }

  /**
   * The row of a virtual host, by name: a host keeps its row across setting reloads and gets the
   * same one back when removed and added again. Rows are never freed (one per name the worker
   * ever served, 300-odd bytes each).
   */
  slotOf(name: string): number {
    let slot = this.slots.get(name);
    if (slot !== undefined) return slot;
    slot = this.names.length;
    this.names.push(name);
    this.slots.set(name, slot);
    if ((slot + 1) * STRIDE > this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
      const shipped = new Float64Array(grown.length);
      shipped.set(this.shipped);
      this.shipped = shipped;
      const gauges = new Float64Array(this.gauges.length * 2);
      gauges.set(this.gauges);
      this.gauges = gauges;
    }
    return slot;
  }

  /** The host name of each row (row 0: ''), in row order. */
  hostNames(): readonly string[] {
    return this.names;
  }

  /** A client transaction was received: counted in row 0 (no host yet); returns that row. */
  begin(): number {
    this.gauges[0]++;
    return 0;
  }

  /** It was routed to the host of counter row `slot`: moves it there; returns its row. */
  routed(slot: number): number {
    if (slot <= 0) return 0;
    this.gauges[0]--;
    this.gauges[slot * GAUGE_STRIDE]++;
    return slot;
  }

  /** The transaction of gauge row `row` sent its status line: it is sending its answer. */
  answering(row: number): void {
    this.gauges[row * GAUGE_STRIDE + 1]++;
  }

  /** The transaction of gauge row `row` finished; `answered`: answering() was called for it. */
  end(row: number, answered: boolean): void {
    const at = row * GAUGE_STRIDE;
    this.gauges[at]--;
    if (answered) this.gauges[at + 1]--;
  }

  /** One ended client transaction, into its host's row (row 0 without a host). */
  count(tx: Counted): void {
    const slot = tx.host === undefined ? 0 : tx.host.counterSlot;
    // Hosts of tests built without a runtime have no row: row 0 then.
    const base = slot > 0 ? slot * STRIDE : 0;
    // The owner of a handed-off URL counts only that it served one (and its origin side): the
    // worker that faced the client counts the transaction, so node sums count it once.
    if (tx.fromSibling) this.values[base + FROM_SIBLING]++;
    else countRow(this.values, base, tx);
  }

  /** An ended client transaction counted again in another row (a statistics directory's). */
  countAt(slot: number, tx: Counted): void {
    countRow(this.values, slot * STRIDE, tx);
  }

  /**
   * One ended origin exchange, into the host's row. `status` 0: no answer came; `firstByteMs`
   * and `completeMs` are from the request to the first byte / the end (-1 when not reached).
   */
  countOrigin(slot: number, failed: boolean, retried: boolean, sent: number, received: number,
    status = 0, firstByteMs = -1, completeMs = -1): void {
    const base = slot > 0 ? slot * STRIDE : 0;
    const v = this.values;
    v[base + F.originRequests]++;
    if (failed) v[base + F.originErrors]++;
    if (retried) v[base + F.originRetried]++;
    v[base + F.originBytesSent] += sent;
    v[base + F.originBytesReceived] += received;
    const complete = completeMs >= 0 ? completeMs : 0;
    v[base + F.originCompleteMs] += complete;
    v[base + ORIGIN_HISTOGRAM_AT + bucketOf(complete)]++;
    if (status > 0) {
      const c = (status >= 600 ? 5 : Math.floor(status / 100)) - 1;
      v[base + F.originResponses1xx + c]++;
      v[base + F.originCompleteMs1xx + c] += complete;
      if (firstByteMs >= 0) {
        v[base + F.originFirstByteMs] += firstByteMs;
        v[base + F.originFirstByteMs1xx + c] += firstByteMs;
      }
    } else {
      v[base + F.originUnanswered]++;
    }
  }

  /** What was counted since the previous call (the first call: since the worker started). */
  takeDeltas(): CounterDeltas {
    const rows = this.names.length;
    const n = rows * STRIDE;
    const out = new Float64Array(n);
    const total = new Float64Array(STRIDE);
    const v = this.values;
    const s = this.shipped;
    for (let i = 0; i < n; i++) {
      const d = v[i]! - s[i]!;
      out[i] = d;
      total[i % STRIDE] += d;
      s[i] = v[i]!;
    }
    return { hosts: this.names.slice(), stride: STRIDE, values: out, total, gauges: this.gauges.slice(0, rows * GAUGE_STRIDE) };
  }
}

function countRow(v: Float64Array, base: number, tx: Counted): void {
  v[base + REQUESTS]++;
  const status = tx.status;
  const total = tx.totalMs;
  if (status > 0) {
    const c = (status >= 600 ? 5 : Math.floor(status / 100)) - 1;
    v[base + RESPONSES_1XX + c]++;
    v[base + TOTAL_1XX + c] += total;
    if (tx.completed) v[base + COMPLETED_1XX + c]++;
    if (tx.firstByteMs >= 0) {
      v[base + FIRST_BYTE] += tx.firstByteMs;
      v[base + FIRST_BYTE_1XX + c] += tx.firstByteMs;
    }
  } else {
    v[base + UNANSWERED]++;
  }
  if (!tx.completed) v[base + INCOMPLETE]++;
  else v[base + COMPLETED]++;
  const bytesIn = tx.requestHeadBytes + tx.requestBodyBytes;
  const bytesOut = tx.responseHeadBytes + tx.responseBodyBytes;
  if (tx.cacheResult === CACHE_RESULTS[TCP_NONE_AT] && tx.origin !== undefined) v[base + BYPASSED]++;
  if (tx.bypass === 1 || tx.bypass === 2) {
    v[base + URL_BYPASS]++;
    v[base + URL_BYPASS_IN] += bytesIn;
    v[base + URL_BYPASS_IN + 1] += bytesOut;
  }
  if (tx.connection.tls !== undefined) {
    v[base + TLS_REQUESTS]++;
    v[base + TLS_IN] += bytesIn;
    v[base + TLS_IN + 1] += bytesOut;
  }
  v[base + CLIENT_HISTOGRAM_AT + bucketOf(total)]++;
  v[base + REQUEST_HEAD] += tx.requestHeadBytes;
  v[base + REQUEST_BODY] += tx.requestBodyBytes;
  v[base + RESPONSE_HEAD] += tx.responseHeadBytes;
  v[base + RESPONSE_BODY] += tx.responseBodyBytes;
  v[base + TOTAL] += total;
  if (tx.handedTo >= 0) v[base + HANDED_OFF]++;
  if (tx.rewrites > 0) v[base + URL_REWRITES] += tx.rewrites;
  // accessAllow and accessDeny sit side by side: 1 -> allow, 2 -> deny.
  if (tx.access !== 0) v[base + ACCESS_ALLOW + tx.access - 1]++;
  if (tx.cacheResult !== undefined) v[base + RESULTS_AT + CACHE_RESULT_INDEX[tx.cacheResult]]++;
}

/** The counters of this worker process. */
export const workerCounters = new Counters();
