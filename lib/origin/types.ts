import type { Readable } from 'node:stream';
import type { DnsRecord } from './dns.js';
import type { ProbeRecord, StateChange } from './health.js';
import type { OriginTrace } from './trace.js';

export interface OriginOptions {
  vhost: string;
  protocol: 'http' | 'https';
  address: string[];
  address2: string[];
  /** Default 3000. */
  connectTimeoutMs?: number;
  /** Time to the response head and between body chunks; default 10000. */
  receiveTimeoutMs?: number;
  /** Idle pooled connections live this long (reuseTimeout); default 60000. */
  keepAliveTimeoutMs?: number;
  /** Connections per resolved address; unlimited when absent or 0. */
  maxConnections?: number;
  /** Consecutive failures that make an address Inactive; default 3. */
  failCount?: number;
  /** Probe period of Inactive addresses; default 5000. */
  recoveryIntervalMs?: number;
  /**
   * How long an Inactive IP of a domain address stays in the set before it is dropped (DNS brings
   * it back as Active if still listed). Default: the remaining DNS TTL. Configured IPs are never
   * dropped: they are probed until they recover or reset() is called.
   */
  inactiveTtlMs?: number;
  /** Every resolution of a domain address, for the dns log. */
  onDns?: (r: DnsRecord) => void;
  /** Every Active/Inactive change of an address IP. */
  onStateChange?: (c: StateChange) => void;
  /** Every recovery probe of an Inactive address IP, for the origin log. */
  onProbe?: (p: ProbeRecord) => void;
}

export interface OriginRequest {
  method: string;
  /** Path and query; appended to the address path. */
  url: string;
  /**
   * Without hop-by-hop fields and without host. Used as is (not copied): the client sets `host`
   * on it for the address it tries.
   */
  headers: Record<string, string | string[]>;
  /** A Buffer can be sent to a second address; a stream only while none of it was taken. */
  body?: Readable | Buffer | null;
  /** Abort when the client goes away; releases the origin connection. */
  signal?: AbortSignal;
  /** Host header to send instead of the one the address implies. */
  hostOverride?: string;
  /** Filled with what the exchange was (addresses tried, socket reuse, times, sizes): trace.ts. */
  trace?: OriginTrace;
  /**
   * Each interim (1xx) answer the origin sends before its final one, as it arrives (fields as
   * in OriginResponse). A 100 never arrives here: undici cuts a connection that sends one
   * unasked (it never sends Expect), and the client's own 100-continue is answered by us.
   * Called on the request (`r.onInformational(...)`), never detached: a request may be a class
   * instance that is its own handler too (the fetch step's).
   */
  onInformational?: (statusCode: number, headers: Record<string, string | string[]>) => void;
}

export interface OriginResponse {
  statusCode: number;
  /** Lower-case names; repeated fields (set-cookie) as arrays. */
  headers: Record<string, string | string[]>;
  body: Readable;
  /** The configured address used. */
  address: string;
  ip: string;
  secondary: boolean;
}

export interface OriginStatus {
  VirtualHost: string;
  Address: Record<string, 'Active' | 'Inactive'>[];
  Address2: Record<string, 'Active' | 'Inactive'>[];
  ActiveIP: Record<string, number>[];
  InactiveIP: Record<string, number>[];
}

/** The head of an origin answer (OriginSet.dispatch): an OriginResponse without its body. */
export type OriginHead = Omit<OriginResponse, 'body'>;

/** What receives an origin answer (OriginSet.dispatch). */
export interface OriginHandler {
  /**
   * The answer's head. Runs inside the origin client's parser: take the body at once
   * (consume, readable or discard), or pause it; its bytes wait until it is taken.
   */
  onHead(head: OriginHead, body: OriginBody): void;
  /** No answer, after failover: an OriginError, or the abort reason when `signal` fired. */
  onError(err: unknown): void;
}

/**
 * Receives the bytes of an answer's body (OriginBody.consume). Its methods are called on it
 * (`h.onData(chunk)`), never detached: a handler may be a class instance.
 */
export interface BodyHandler {
  onData(chunk: Buffer): void;
  onEnd(): void;
  /** The body broke (connection lost, receive timeout): nothing more comes. */
  onError(err: Error): void;
}

/** The body of an answer given to OriginHandler.onHead. */
export interface OriginBody {
  /** Streams the body to `h` (what arrived meanwhile first). */
  consume(h: BodyHandler): void;
  /** Stops the flow from the origin until resume(). */
  pause(): void;
  resume(): void;
  /** Nobody wants the body: the connection is given up unless the body is already complete. */
  discard(): void;
  /** The body as a Readable, for callers that pipe it. */
  readable(): Readable;
}
