// Step "finish", the last of the table: every transaction ends here exactly once, whatever ended
// it (the answer went out, the client went away before or during it, receive refused it, a
// sibling served it). The record is completed (status, bytes, times, completed), the worker's
// counters updated, and the record handed to the sinks (access log, tests). The driver enters it
// when the response closes (steps.ts `track`).
import type { Socket } from 'node:net';
// The module's binding, not node's global getter (parts/transaction.ts says why).
import { performance } from 'node:perf_hooks';
import { TCP_NONE } from '../cache/policy/results.js';
import { onTraceDone, type OriginTrace } from '../origin/index.js';
import { workerCounters } from './parts/counters.js';
import { countDirectories } from './parts/directory-stats.js';
import { h2Bytes, isH2 } from './parts/h2.js';
import type { TransactionRecord } from './parts/transaction.js';
import { DONE } from './parts/runtime-state.js';

export type RecordSink = (tx: TransactionRecord) => void;
export type OriginSink = (trace: OriginTrace) => void;

const sinks: RecordSink[] = [];
const originSinks: OriginSink[] = [];

/** Registers a sink for each origin exchange of this worker when it ends (the origin log). */
export function addOriginSink(sink: OriginSink): () => void {
  originSinks.push(sink);
  return () => {
    const i = originSinks.indexOf(sink);
    if (i >= 0) originSinks.splice(i, 1);
  };
}

/**
 * Registers a sink for the finished records of this worker; returns its removal. A sink runs
 * synchronously in finish and must not keep the transaction (req, res): it copies what it needs
 * (toJSON) or formats its line there. A sink that throws is skipped for that record.
 */
export function addRecordSink(sink: RecordSink): () => void {
  sinks.push(sink);
  return () => {
    const i = sinks.indexOf(sink);
    if (i >= 0) sinks.splice(i, 1);
  };
}

/** What finish keeps on a connection: where the previous transaction's bytes ended. */
interface ConnectionMarks extends Socket {
  svcReadMark?: number;
  svcWriteMark?: number;
  /** Bytes handed to the kernel (net.Socket internal; bytesWritten also counts the unsent buffer). */
  _bytesDispatched?: number;
}

/**
 * Step "finish", the table's last: completes the record, counts it, gives it to the sinks.
 * Entered through the driver when the transaction's response closes (steps.ts `track`), however
 * the transaction ended; runs once.
 */
export function finishStep(tx: TransactionRecord): typeof DONE {
  if (tx.totalMs >= 0) return DONE;
  tx.totalMs = performance.now() - tx.startMono;
  const res = tx.res;
  const req = tx.req;
  // An HTTP/2 connection carries many transactions at once: its streams count their own bytes.
  // (The version alone could be an HTTP/1 request line claiming 2.0, answered 505.)
  const sent = req.httpVersionMajor === 2 && isH2(req) ? h2Bytes(tx) : connectionBytes(tx);
  tx.completed = res.writableFinished && !tx.aborted;
  if (tx.sessionRow >= 0) workerCounters.end(tx.sessionRow, tx.firstByteMs >= 0);
  // An answer started when a byte of it went out (document 3: a connection that ends before the
  // response starts logs status 0).
  tx.status = res.headersSent && (sent > 0 || tx.completed) ? res.statusCode : 0;
  if (tx.status === 0) tx.firstByteMs = -1;
  tx.cacheResult ??= TCP_NONE;
  // The hook's cacheResult names what the transaction counts and logs as (document 2).
  const hooked = tx.hook?.cacheResult;
  if (hooked !== undefined) tx.cacheResult = hooked;
  workerCounters.count(tx);
  const host = tx.host;
  if (host?.directoryStats !== undefined && !tx.fromSibling) countDirectories(host.directoryStats, workerCounters, host.logName, tx);
  for (let i = 0; i < sinks.length; i++) {
    try {
      sinks[i]!(tx);
    } catch {
      // A broken sink must not break the transaction's end or the other sinks.
    }
  }
  return DONE;
}

/**
 * Bytes from the connection's own counters since the previous transaction on it ended: what
 * really crossed, for every way a transaction can end. (A pipelining client whose next request
 * was read before this one ended has those bytes counted here.) Returns the bytes sent.
 */
function connectionBytes(tx: TransactionRecord): number {
  const req = tx.req;
  const socket = req.socket as ConnectionMarks;
  const read = socket.bytesRead;
  const written = socket._bytesDispatched ?? socket.bytesWritten ?? 0;
  const got = read - (socket.svcReadMark ?? 0);
  const sent = written - (socket.svcWriteMark ?? 0);
  socket.svcReadMark = read;
  socket.svcWriteMark = written;
  const head = tx.requestHeadBytes;
  // Beyond the head only a request with a body has more (a bodiless one: a client's odd spacing).
  tx.requestBodyBytes = got > head && hasBody(req.headers) ? got - head : 0;
  const header = (tx.res as unknown as { _header: string | null })._header;
  const headBytes = header === null || header === undefined ? 0 : header.length; // latin1: chars are bytes
  tx.responseHeadBytes = headBytes < sent ? headBytes : sent;
  tx.responseBodyBytes = sent - tx.responseHeadBytes;
  return sent;
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const cl = headers['content-length'];
  return cl !== undefined && cl !== '0';
}

/**
 * Origin counters follow the origin exchange, not the client transaction: a fetch goes on (the
 * object is stored) after its client left, and a sibling's request is fetched by the owner. An
 * exchange counts once when it ends; `Client-Close` (we closed first: the client left, or the
 * body was not wanted) is not an origin error.
 */
function countOrigin(t: OriginTrace): void {
  // A hook call (tag HOOK_TRACE) is no origin exchange: the hook stage logs it once its answer is
  // read (logHookCall), with what the answer said.
  if (t.tag === HOOK_TRACE) return;
  const failed = t.sockError !== undefined && t.sockError !== 'Client-Close';
  workerCounters.countOrigin(t.tag, failed, t.retried, t.requestHeadBytes + t.requestBodyBytes, t.responseHeadBytes + t.responseBodyBytes,
    t.status, t.firstByteMs, t.completeMs);
  for (let i = 0; i < originSinks.length; i++) {
    try {
      originSinks[i]!(t);
    } catch {
      // As for the record sinks: a broken sink breaks nothing else.
    }
  }
}
onTraceDone(countOrigin);

/** The tag of a hook call's trace: counted in no host row. */
export const HOOK_TRACE = -1;

/** A hook call's line for the origin log sinks (the origin log's `hook1` lines). */
export function logHookCall(t: OriginTrace): void {
  for (let i = 0; i < originSinks.length; i++) {
    try {
      originSinks[i]!(t);
    } catch {
      // As for the record sinks.
    }
  }
}
