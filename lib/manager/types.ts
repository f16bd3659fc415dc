// The boundary of the management API: what it needs from the primary (RtBridge, the setting)
// and the transport-neutral request / reply its route handlers see, so that the same handlers
// serve the plain port (node:http) and the TLS port (node:https).
import type { InvalidateKind, InvalidateResult } from '../cache/commands/invalidate.js';
import type { Target } from '../cache/commands/targets.js';
import type { Setting } from '../setting/types.js';

export type OriginState = 'Active' | 'Inactive';

/** One item of `/monitoring/origin` (document 1, "Origin status"). */
export interface OriginStatus {
  VirtualHost: string;
  /** `{<configured address>: Active|Inactive}` per primary address. */
  Address: Array<Record<string, OriginState>>;
  Address2: Array<Record<string, OriginState>>;
  /** `{<ip>: <ttl seconds>}`; 0 for an origin configured by IP. */
  ActiveIP: Array<Record<string, number>>;
  InactiveIP: Array<Record<string, number>>;
}

/**
 * What the API needs from the RT workers; the primary implements it over IPC. The API checks
 * `running()` and `vhosts()` first (503 / 404), but a method may still throw RT_NOT_RUNNING or
 * VHOST_NOT_FOUND (lib/errors/codes.ts, answered with the table's status) when the state changes
 * in between.
 */
export interface RtBridge {
  /** True when at least one RT worker is up and able to answer. */
  running(): boolean;
  /** Names of the virtual hosts being served. */
  vhosts(): string[];
  /** Origin status of one host, or of every host when `vhost` is undefined. */
  originStatus(vhost?: string): Promise<OriginStatus[]>;
  /** Resets origin exclusion / recovery and pooled sessions of one host, or of every host. */
  resetOrigin(vhost?: string): Promise<void>;
}

/**
 * The invalidation commands of the purge family and fileinfo, as the routes use them; the
 * primary's InvalidationService implements it.
 */
/**
 * An invalidation call the API accepted (its targets parse), seen before it runs here: the
 * fleet forwards it to the peers (propagation) and appends it to the bus.
 */
export interface RecognizedInvalidation {
  kind: InvalidateKind;
  /** `/command/async/*`: queued here. */
  async: boolean;
  url: string;
  /** What `url` named, as parsed here (hosts resolved). */
  targets: Target[];
  sec?: number;
  request: Pick<ApiRequest, 'method' | 'path' | 'rawQuery' | 'headers'> & { body?: Buffer };
}

export interface InvalidationCommands {
  /** Parses `url` (a long list a slice at a time); rejects with BAD_TARGET (400) or TARGET_UNKNOWN_HOST (502) for a bad or unknown target. */
  targets(url: string | null): Promise<Target[]>;
  /** The targets of cache tags on one host (a name or alias) or every host; throws BAD_TARGET (400) or TARGET_UNKNOWN_HOST (502). */
  tagTargets(tags: readonly string[], vhost: string | undefined): Target[];
  /** Called once per accepted call, before it runs (or is queued). */
  recognized?(call: RecognizedInvalidation): void;
  /** `status`: the HTTP status of the answer (purge.resCodeNoCtrlTarget when nothing matched). */
  run(kind: InvalidateKind, targets: Target[], sec?: number): Promise<{ result: InvalidateResult; status: number }>;
  fileinfo(vhost: string, url: string): Promise<Record<string, unknown>[]>;
}

/** The asynchronous invalidation queue of `/command/async/*`; the primary's AsyncInvalidationQueue implements it. */
export interface AsyncInvalidations {
  readonly used: number;
  readonly max: number;
  /** Queues a command; false when the queue is full. Resolves once every worker applies its pre-cache control. */
  add(command: InvalidateKind, url: string, targets: Target[]): Promise<boolean>;
  /** Clears every waiting command; the number cleared. */
  reset(): Promise<number>;
  resetPrectrl(vhost: string): Promise<void>;
  listFor(vhost: string): { command: string; timestamp: string; url: string }[];
  prectrlEnabled(vhost: string): boolean;
}

/** A request as the route handlers see it, whichever server received it. */
export interface ApiRequest {
  /** Upper case. */
  method: string;
  /** Percent-decoded path without the query; the access check and routing use this same string. */
  path: string;
  /** The query string as sent, without `?` (some commands must read it raw, e.g. `url=`). */
  rawQuery: string;
  query: URLSearchParams;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Caller address as the socket reports it (possibly IPv4-mapped IPv6). */
  remoteAddress: string;
  /** `rest` holds the path after a prefix route's prefix. */
  params: Record<string, string>;
  body(): Promise<Buffer>;
}

export interface ApiReply {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

/** Given to every route handler. */
export interface RouteContext {
  setting(): Setting;
  version: string;
  rt: RtBridge;
}

export type RouteHandler = (req: ApiRequest, ctx: RouteContext) => Promise<ApiReply>;
