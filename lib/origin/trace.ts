// What one origin exchange was, for the origin log and the statistics (document 3 origin log:
// address, reused session, dns/connect/first-byte/complete times, sizes, sc-sock-error,
// x-cs-retry). The caller passes an OriginTrace in the request (OriginRequest.trace); the
// OriginSet names each attempt, and undici's diagnostics channels fill in the rest: the request
// undici creates for an attempt is linked to the trace while the dispatch call runs (undici
// creates it synchronously), and its later events (socket, head, body chunks, end, error) find
// the trace on it. Nothing is allocated per request beyond the trace and undici's own event
// messages; the channels are subscribed at the first traced request.
//
// A request that waits in the pool's queue (every connection busy at maxConnections) is created
// later, unlinked: its trace keeps the address, attempts, status and time to first byte that the
// caller sees, without reuse, connect time or sizes.
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
  /** The answer's head as undici gave it (name, value, ...): read only by the origin log. */
  responseHeaders: (Buffer | string)[] | undefined = undefined;
  /** What the origin log needs of the client side, set by the caller only when that log is on. */
  note: OriginNote | undefined = undefined;
  /** Linked to undici's request of the current attempt (see the head comment). */
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

/** The answer's head reached the caller: an unlinked exchange ends here (no body events come). */
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

// --- Called by OriginSet around each attempt ---------------------------------------------------

let armed: OriginTrace | null = null;
let subscribed = false;

/**
 * An attempt on `hostPort` (`ip:port`, `[ip]:port`) starts; the request undici creates next
 * belongs to the trace. `domain`: the configured origin host of the attempt.
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
  t.linked = false;
  t.reused = false;
  t.sockError = undefined;
  armed = t;
}

/** The dispatch call returned: later requests are not this attempt's. */
export function endDispatch(): void {
  armed = null;
}

// --- undici's diagnostics channels ---------------------------------------------------------------

const TRACE = Symbol('svc.originTrace');
const CONNECTED_AT = Symbol('svc.connectedAt');
const USES = Symbol('svc.uses');
const SOCKET_ID = Symbol('svc.socketId');
// Node-unique: the worker's pid in the high bits, a count of its connections in the low 20.
let socketIds = process.pid * 2 ** 20;

interface TracedRequest { [TRACE]?: OriginTrace }
interface TracedSocket extends Socket { [CONNECTED_AT]?: number; [USES]?: number; [SOCKET_ID]?: number }

function subscribe(): void {
  subscribed = true;
  diagnostics.subscribe('undici:request:create', onCreate as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:client:connected', onConnected as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:client:sendHeaders', onSendHeaders as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:request:bodyChunkSent', onBodyChunkSent as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:request:headers', onHeaders as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:request:bodyChunkReceived', onBodyChunkReceived as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:request:trailers', onTrailers as diagnostics.ChannelListener);
  diagnostics.subscribe('undici:request:error', onError as diagnostics.ChannelListener);
}

function onCreate(m: { request: TracedRequest }): void {
  const t = armed;
  if (t === null) return;
  armed = null;
  m.request[TRACE] = t;
  t.linked = true;
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
  const t = m.request[TRACE];
  if (t === undefined) return;
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

function onHeaders(m: { request: TracedRequest; response: { statusCode: number; headers: (Buffer | string)[]; statusText: string } }): void {
  const t = m.request[TRACE];
  if (t === undefined) return;
  const r = m.response;
  t.status = r.statusCode;
  // No HTTP status (RFC 9110 15): the exchange failed, however it ends. The caller learns the
  // status only later when it waited on a promise, and a short body may have ended by then.
  if (r.statusCode > MAX_STATUS) t.sockError = 'Server-Close';
  t.firstByteMs = performance.now() - t.startedAt;
  // `HTTP/1.1 200 OK` CRLF, each `name: value` CRLF, CRLF: as received, give or take spacing.
  let bytes = 13 + r.statusText.length + 2 + 2;
  const h = r.headers;
  for (let i = 0; i < h.length; i++) bytes += h[i]!.length + 2;
  t.responseHeadBytes = bytes;
  t.responseHeaders = h;
}

function onBodyChunkReceived(m: { request: TracedRequest; chunk: Buffer }): void {
  const t = m.request[TRACE];
  if (t !== undefined) t.responseBodyBytes += m.chunk.length;
}

function onTrailers(m: { request: TracedRequest }): void {
  const t = m.request[TRACE];
  if (t !== undefined) settle(t);
}

function onError(m: { request: TracedRequest; error: unknown }): void {
  const t = m.request[TRACE];
  if (t === undefined || t.done) return;
  t.sockError = sockErrorOf(m.error);
  // Before the head the OriginSet may try another address; it (or its caller) ends the trace.
  // After it, or when the caller gave up, the exchange is over.
  if (t.status > 0 || t.sockError === 'Client-Close') settle(t);
}
