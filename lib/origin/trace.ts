// What one origin exchange was, for the origin log and the statistics (document 3 origin log:
// address, reused session, dns/connect/first-byte/complete times, sizes, sc-sock-error,
// x-cs-retry). The caller passes an OriginTrace in the request (OriginRequest.trace); the
// OriginSet names each attempt, and the attempt's undici handler (dispatch.ts) fills in the
// answer: status, head and body sizes, the end or the error, as undici hands them to it. Only
// what the handler cannot see, the connection, comes from undici's diagnostics channels: a new
// connection (`client:connected`), and the request head written on it (`client:sendHeaders`:
// reuse, connect time, head size), which belongs to the attempt whose handler undici started
// just before (`writing`, set by onRequestStart in the same synchronous write). Per-request
// channels cost every miss a message object and a publish each (create, headers, every body
// chunk, trailers), about 5% of a miss's CPU: the handler's own calls cost nothing extra.
// Nothing is allocated per request beyond the trace; the channels are subscribed at the first
// traced request.
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { classify, Failure, MAX_STATUS, OriginError, type SockError } from './errors.js';

/** The client side of an exchange, for the origin log (lib/log/origin). */
export interface OriginNote {
  vhost: string;
  method: string;
  url: string;
  /** The Range of the origin request (cs-range), not the client's. */
  range: string | undefined;
  acceptEncoding: string | undefined;
  sessionId: number;
  ctxId: string;
  /** cs-reqinfo: `Bypass` for a pass-through (not cached), `Bypass/instant`, or `-`. */
  bypass: string;
  /** Where the request came from: `cache` (a fetch or pass-through), `recovery`, `healthcheck`, a function name. */
  sessionType: string;
  /** cs-balance of the host. */
  balance: string;
  /** x-sc-chain-error / x-sc-chain-info of a function call (the hook): its error text, the cache key. */
  chainError?: string | undefined;
  chainInfo?: string | undefined;
}

export class OriginTrace {
  /** The caller's tag, handed back unchanged (the pipeline keeps its counter row here). */
  readonly tag: number;
  /** performance.now() when the exchange was asked for; the times below count from it. */
  readonly startedAt = performance.now();
  /** `ip:port` of the last attempt ('' when none was made: DNS failed). */
  address = '';
  /** Addresses tried; more than one is a failover (x-cs-retry y). */
  attempts = 0;
  /** The request went on a kept-alive connection (else a new one was opened). */
  reused = false;
  /** ms spent before the first attempt (resolving a domain origin); 0 when nothing waited. */
  dnsMs = -1;
  /** ms from the first attempt to the connection the answer came on (0 when reused). */
  connectMs = -1;
  firstByteMs = -1;
  /** ms to the end of the answer's body (the exchange's end when it failed), -1 until then. */
  completeMs = -1;
  /** The origin's status, 0 when no answer came. */
  status = 0;
  requestHeadBytes = 0;
  requestBodyBytes = 0;
  responseHeadBytes = 0;
  responseBodyBytes = 0;
  /** Why the exchange failed (document 3 sc-sock-error); undefined when it did not. */
  sockError: SockError | undefined = undefined;
  /** The exchange is over (onTraceDone has seen it). */
  done = false;
  /** The configured origin host (domain or IP) of the last attempt. */
  domain = '';
  /** Our address on the origin connection. */
  localAddress = '';
  /** Node-unique number of the origin connection (origin log cs-sid), 0 when unknown. */
  socketId = 0;
  /** This exchange's place among the connection's requests, from 1 (cs-tcount). */
  socketUses = 0;
  /**
   * The answer's head as undici parsed it (lower-case names, a repeated field an array): read
   * only by the origin logs (responseField). Not undici's raw list: that is a Buffer per name and
   * value (about 1.4 KB a miss), and whatever holds a finished trace a while (the exchange's
   * handler, which undici lets go late) kept them past two scavenges, to be marked and swept by
   * the next mark-compact. The parsed head's strings are the ones the stored copy keeps anyway.
   */
  responseHeaders: Readonly<Record<string, string | string[]>> | undefined = undefined;
  /** What the origin log needs of the client side, set by the caller only when that log is on. */
  note: OriginNote | undefined = undefined;
  /** An OriginSet's attempt feeds it (its handler); false for an exchange made elsewhere (a pagedesk edit). */
  linked = false;
  firstAttemptAt = 0;

  constructor(tag = 0) {
    this.tag = tag;
  }

  get retried(): boolean {
    return this.attempts > 1;
  }

  toJSON(): Record<string, unknown> {
    return {
      address: this.address, attempts: this.attempts, retried: this.retried, reused: this.reused, dnsMs: this.dnsMs,
      connectMs: this.connectMs, firstByteMs: this.firstByteMs, completeMs: this.completeMs, status: this.status,
      requestHeadBytes: this.requestHeadBytes, requestBodyBytes: this.requestBodyBytes, responseHeadBytes: this.responseHeadBytes,
      responseBodyBytes: this.responseBodyBytes, sockError: this.sockError ?? null, done: this.done,
    };
  }
}

type TraceDone = (trace: OriginTrace) => void;
let onDone: TraceDone | undefined;

/** The one function told when each traced exchange is over (the pipeline's counters). */
export function onTraceDone(fn: TraceDone): void {
  onDone = fn;
}

function settle(t: OriginTrace): void {
  if (t.done) return;
  t.done = true;
  if (t.completeMs < 0) t.completeMs = performance.now() - t.startedAt;
  onDone?.(t);
}

/** How an error ends an exchange in document 3's words. */
function sockErrorOf(err: unknown): SockError {
  if (err instanceof OriginError) return err.sockError;
  if ((err as { code?: unknown } | null)?.code === 'UND_ERR_BODY_TIMEOUT') return 'Receive-Timeout';
  switch (classify(err)) {
    case Failure.ConnectTimeout: return 'Connect-Timeout';
    case Failure.ReceiveTimeout: return 'Receive-Timeout';
    case Failure.Aborted: return 'Client-Close';
    default: return 'Server-Close';
  }
}

// --- Called by the caller of OriginSet.request -----------------------------------------------

/** The answer's head reached the caller: an unlinked exchange ends here (nothing else feeds it). */
export function traceAnswered(t: OriginTrace, status: number): void {
  if (t.linked) return;
  t.status = status;
  if (t.firstByteMs < 0) t.firstByteMs = performance.now() - t.startedAt;
  settle(t);
}

/** The request failed (after every attempt): the exchange ends with the error's kind. */
export function traceFailed(t: OriginTrace, err: unknown): void {
  if (t.done) return;
  t.sockError = sockErrorOf(err);
  settle(t);
}

// --- Called by the attempt's handler (dispatch.ts) ------------------------------------------------

/** The attempt whose request undici is writing now (between onRequestStart and its head). */
let writing: OriginTrace | null = null;
let subscribed = false;

/**
 * An attempt on `hostPort` (`ip:port`, `[ip]:port`) starts: its handler feeds the trace from now
 * on (linked). `domain`: the configured origin host of the attempt.
 */
export function beginAttempt(t: OriginTrace, hostPort: string, domain: string): void {
  if (!subscribed) subscribe();
  const now = performance.now();
  if (t.attempts === 0) {
    t.dnsMs = now - t.startedAt;
    t.firstAttemptAt = now;
  }
  t.attempts++;
  t.address = hostPort;
  t.domain = domain;
  t.linked = true;
  t.reused = false;
  t.sockError = undefined;
}

/**
 * undici starts writing the attempt's request (its handler's onRequestStart): the head it
 * publishes next on `client:sendHeaders`, in the same synchronous call, is this trace's. Any
 * other attempt's start (undefined: an untraced one) takes the place of an earlier one.
 */
export function traceWriting(t: OriginTrace | undefined): void {
  writing = t ?? null;
}

/**
 * A head (interim or final) arrived: `raw` is undici's name, value, ... list as received (only
 * measured), `head` the same parsed (kept for the logs).
 */
export function traceHead(t: OriginTrace, status: number, raw: readonly (Buffer | string)[] | undefined, statusText: string | undefined,
  head: Readonly<Record<string, string | string[]>>): void {
  t.status = status;
  // No HTTP status (RFC 9110 15): the exchange failed, however it ends. The caller learns the
  // status only later when it waited on a promise, and a short body may have ended by then.
  if (status > MAX_STATUS) t.sockError = 'Server-Close';
  t.firstByteMs = performance.now() - t.startedAt;
  // `HTTP/1.1 200 OK` CRLF, each `name: value` CRLF, CRLF: as received, give or take spacing.
  let bytes = 13 + (statusText?.length ?? 0) + 2 + 2;
  if (raw !== undefined) for (let i = 0; i < raw.length; i++) bytes += raw[i]!.length + 2;
  t.responseHeadBytes = bytes;
  t.responseHeaders = head;
}

/** The first value of the answer's field `name` (lower case), for the origin logs. */
export function responseField(t: OriginTrace, name: string): string | undefined {
  const v = t.responseHeaders?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The answer's body ended: the exchange is over. */
export function traceEnd(t: OriginTrace): void {
  settle(t);
}

/** The attempt failed (before or after its head). */
export function traceError(t: OriginTrace, err: unknown): void {
  if (writing === t) writing = null;
  if (t.done) return;
  t.sockError = sockErrorOf(err);
  // Before the head the OriginSet may try another address; it (or its caller) ends the trace.
  // After it, or when the caller gave up, the exchange is over.
  if (t.status > 0 || t.sockError === 'Client-Close') settle(t);
}

// --- undici's diagnostics channels ---------------------------------------------------------------

const TRACE = Symbol('svc.originTrace');
const CONNECTED_AT = Symbol('svc.connectedAt');
const USES = Symbol('svc.uses');
const SOCKET_ID = Symbol('svc.socketId');
// Node-unique: the worker's pid in the high bits, a count of its connections in the low 20.
let socketIds = process.pid * 2 ** 20;

interface TracedRequest { [TRACE]?: OriginTrace; body?: unknown }
interface TracedSocket extends Socket { [CONNECTED_AT]?: number; [USES]?: number; [SOCKET_ID]?: number }

function subscribe(): void {
  subscribed = true;
  diagnostics.subscribe('undici:client:connected', onConnected as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:client:sendHeaders', onSendHeaders as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:request:bodyChunkSent', onBodyChunkSent as diagnostics.ChannelListener);
}

/**
 * Origin connections this process opened and that closed since it started (System.ClientSocket
 * Connected/Closed), counted from undici's connect events once the channels are subscribed.
 */
export const originSockets = { connected: 0, closed: 0 };

function originSocketClosed(): void {
  originSockets.closed++;
}

function onConnected(m: { socket: TracedSocket }): void {
  m.socket[CONNECTED_AT] = performance.now();
  originSockets.connected++;
  m.socket.once('close', originSocketClosed);
}

function onSendHeaders(m: { request: TracedRequest; headers: string; socket: TracedSocket }): void {
  const t = writing;
  if (t === null) return;
  writing = null;
  // Only a request with a body publishes more (bodyChunkSent), and finds its trace on itself.
  if (m.request.body != null) m.request[TRACE] = t;
  const socket = m.socket;
  const uses = socket[USES] ?? 0;
  socket[USES] = uses + 1;
  t.reused = uses > 0;
  t.socketUses = uses + 1;
  t.socketId = socket[SOCKET_ID] ??= ++socketIds;
  if (t.localAddress === '') t.localAddress = socket.localAddress ?? '';
  // A connection opened for this attempt counts from the first attempt (document 3: a lost
  // reused socket and a new one give time-connect from the first try); one opened ahead of it
  // (undici reconnecting) cost this request nothing.
  const connectedAt = socket[CONNECTED_AT] ?? t.firstAttemptAt;
  t.connectMs = t.reused ? 0 : Math.max(0, connectedAt - t.firstAttemptAt);
  t.requestHeadBytes = m.headers.length;
}

function onBodyChunkSent(m: { request: TracedRequest; chunk: Uint8Array | string }): void {
  const t = m.request[TRACE];
  if (t !== undefined) t.requestBodyBytes += typeof m.chunk === 'string' ? Buffer.byteLength(m.chunk) : m.chunk.length;
}
