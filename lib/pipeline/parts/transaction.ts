// One client transaction as it moves through the pipeline, and its record: receive creates it,
// the stages fill in what they learn, finish (finish.ts) completes it exactly once and hands it
// to the counters and the record sinks. One object per transaction: the record fields live on it
// (docs/pipeline.md, "The transaction record"). With it, the worker's state the steps read
// (RuntimeState), whose driver takes the transaction back: the two name each other, so they live
// here. Every module of the pipeline reads this one, so it imports none that reads it back: the
// shapes it names are leaves (shapes.ts, step-names.ts, setting-trace.ts, counters.ts), and the
// answer's head is written by tx-response.ts.
import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
// The module's binding, not the global: node's global `performance` is a getter (installed
// lazily), so every read of it went through V8's global load IC and that getter, three times per
// request (about 0.1 us of a hit-1k's 16, bench/prof/perfsplit.sh).
import { performance } from 'node:perf_hooks';
import type { CacheResult } from '../../cache/policy/results.js';
import type { CachedObject } from '../../cache/store.js';
import type { OriginTrace } from '../../origin/index.js';
import type { Connection, Protocol, RecordFields } from '../../record/transaction.js';
import type { HeaderEdit } from '../../network/header-edit.js';
import type { ServiceCode } from '../../network/fallbacks.js';
import type { HookRedefinition } from '../../hook/answer.js';
import type { PagedeskRuntime } from '../../pagedesk/producer.js';
import type { HashRing } from '../../balance/ring.js';
import type { HashKeyFunction } from '../../balance/hash-key.js';
import type { LuaHash } from '../../balance/lua-hash.js';
import type { VhostTable } from '../../routing/vhost-table.js';
import { workerCounters } from './counters.js';
import { newContextId } from './context-ids.js';
import type { SettingTrace } from './setting-trace.js';
import type { CacheStatusNote, HostRuntime } from './shapes.js';
import type { DrivenStep, Next } from './step-names.js';

/** Routings one request may take (rewrites and fallbacks together); the next one is a loop. */
export const MAX_ROUTINGS = 10;

/** A dual-stack (`::`) listener reports IPv4 peers as `::ffff:a.b.c.d`: logged as `a.b.c.d`. */
function plainAddress(a: string | undefined): string {
  if (a === undefined) return '';
  return a.startsWith('::ffff:') && a.includes('.', 7) ? a.slice(7) : a;
}

interface NamedSocket extends Socket { svcConnection?: Connection; encrypted?: boolean; getProtocol?: () => string | null }

/** node's names of the TLS versions -> document 3's (`sc-resinfo`); TLS 1.3 follows their pattern. */
const TLS_NAMES: Record<string, string> = { 'TLSv1.3': 'TLS1.3', 'TLSv1.2': 'TLS1.2', 'TLSv1.1': 'TLS1.1', TLSv1: 'TLS1', SSLv3: 'SSL3' };

function tlsOf(socket: NamedSocket): string | undefined {
  if (socket.encrypted !== true) return undefined;
  const v = socket.getProtocol?.() ?? null;
  return v === null ? 'TLS' : TLS_NAMES[v] ?? v;
}

/**
 * Read once per connection and kept on it: every request of a keep-alive connection shares it,
 * and node loses the local name once the socket is closed (a client that aborts).
 */
export function connectionOf(socket: NamedSocket): Connection {
  let c = socket.svcConnection;
  if (c === undefined) {
    c = {
      clientAddress: plainAddress(socket.remoteAddress), clientPort: socket.remotePort ?? 0,
      serverAddress: plainAddress(socket.localAddress), serverPort: socket.localPort ?? 0, tls: tlsOf(socket),
    };
    socket.svcConnection = c;
  }
  return c;
}

type FallbackState = { statuses: number[]; hosts: string[]; code: ServiceCode };
type Reroute = (hostName: string | undefined) => void;

/** The record's fields few transactions set (rewrites, fallbacks, the hook, pagedesk ...), at their defaults. */
class Occasional {
  fromSibling = false;
  handedTo = -1;
  responseEdits: HeaderEdit[] | undefined = undefined;
  postBody: Buffer | undefined = undefined;
  fallback: FallbackState | undefined = undefined;
  reroute: Reroute | undefined = undefined;
  rewrites = 0;
  logUrl: string | undefined = undefined;
  hookLinked: '' | 'y' | 'n' = '';
  hook: HookRedefinition | undefined = undefined;
  pagedesk: PagedeskRuntime | undefined = undefined;
  trace: SettingTrace | undefined = undefined;
}

export class TransactionRecord implements RecordFields {
  /** The serving virtual host (its name is `x-vhost`); undefined when none matched (404, 400 ...). */
  host: HostRuntime | undefined = undefined;
  /** Node-unique (document 3 `session-id`), from the worker's block of the primary's ids. */
  readonly sessionId: number;
  /** Path plus query as the cache and the origin see it (after the target form and rewrites). */
  url: string;
  readonly connection: Connection;
  /**
   * The counter row whose session gauges count this transaction (0 until routed to a host); -1
   * when it is not counted (a sibling's hand-off on the internal port). Kept so a later change of
   * `host` cannot unbalance the gauges.
   */
  sessionRow = -1;
  /** performance.now() at receive: the times below count from it. */
  readonly startMono: number;
  /** ms from receive to writeHead (the status line), -1 when no answer started. */
  firstByteMs = -1;
  /** ms from receive to the end of the transaction, -1 until finish. */
  totalMs = -1;
  /** The status sent; 0 when no byte of an answer went out. Final once finished. */
  status = 0;
  /** The head as parsed: request line, `name: value` lines, CRLFs. */
  requestHeadBytes = 0;
  /** Bytes the connection read for this transaction beyond its head (0 for a bodiless request). */
  requestBodyBytes = 0;
  /** The serialized response head as written (node's `_header`), up to what went out. */
  responseHeadBytes = 0;
  /** Bytes written to the connection after the head (chunked framing and multipart included). */
  responseBodyBytes = 0;
  /**
   * The fields the answering stage gave writeHead (a stored view's shared head array for a hit:
   * its Age and cache result may already be another request's, its other fields are this
   * answer's). The logs read single fields here instead of scanning node's serialized head.
   */
  responseFields: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined = undefined;
  /**
   * A field object a stage built for this answer alone (stored-view.ts answerHeaders): the head
   * (TxResponse) adds its Cache-Status to it in place instead of copying every field again.
   */
  ownFields: OutgoingHttpHeaders | undefined = undefined;
  cacheResult: CacheResult | undefined = undefined;
  /** A stage saw the answer break (origin body, store file): the client got an incomplete body. */
  aborted = false;
  /** The whole answer went out (`x-transaction-status` c, else x). Final once finished. */
  completed = false;
  /**
   * The origin exchange this transaction started (its fetch or pass-through), if any. A fetch
   * other clients joined belongs to the one that started it; it can outlive the transaction (the
   * object is still stored after the client left): `origin.done` says whether it ended.
   */
  origin: OriginTrace | undefined = undefined;
  /**
   * Bypassed to the origin: 0 no; by a bypass rule (bypass.ts) 1 `Bypass`, 2 `Bypass/instant`;
   * 3 a POST under bypass.postMethod (lookup.ts), logged `Bypass` but not counted in UrlBypass.
   */
  bypass: 0 | 1 | 2 | 3 = 0;
  /** The worker's state the steps read (routing, limits, the driver); set at receive. */
  runtime: RuntimeState | undefined = undefined;
  /** The service port the request came in on (undefined: the internal sibling port) and its local address. */
  port: number | undefined = undefined;
  localAddress: string | undefined = undefined;
  /** Access control: 0 not checked, 1 let through, 2 denied or redirected (ServiceAccess). */
  access: 0 | 1 | 2 = 0;
  /** The host name the rules match against: the request's, or the one a rewrite routed to. */
  ruleHost = '';
  /** What the cache stages noted for the answer's Cache-Status member (cache-status.ts). */
  cacheStatus: CacheStatusNote | undefined = undefined;
  // What the lookup step decided, carried to the step it named (fetch-plan.ts): fields, so that a
  // hit allocates nothing to hand its copy to deliver.
  /**
   * The worker's cache stages (lookup.ts sets them): what the fetch and deliver steps work with.
   * Read and written as a CacheContext through context.ts (`cacheOf`) only: their shapes name the
   * transaction, so the record does not name them.
   */
  cache: object | undefined = undefined;
  /** The stored copy the deliver step answers from, taken by it. */
  stored: CachedObject | undefined = undefined;
  /** The time the copy was judged at (its Age counts to it). */
  storedNow = 0;
  /** Fields of the stored copy a no-cache="..." forbids in this answer. */
  storedDrop: readonly string[] | undefined = undefined;
  /** What the fetch step fetches, taken by it: a Plan, read and written through fetch-plan.ts only (as `cache`). */
  plan: object | undefined = undefined;
  private ctx: string | undefined = undefined;
  /** The fields few transactions set (Occasional), made by the first of them set. */
  private more: Occasional | undefined = undefined;

  constructor(readonly req: IncomingMessage, readonly res: ServerResponse, sessionId: number) {
    this.sessionId = sessionId;
    this.url = req.url ?? '';
    this.connection = connectionOf(req.socket as NamedSocket);
    this.startMono = performance.now();
  }

  // What the request and its connection already hold is read from them when asked (the hit path
  // copies nothing a sink may never read).
  get method(): string { return this.req.method ?? ''; }
  /** The request target as received. */
  get urlReceived(): string { return this.req.url ?? ''; }
  get httpVersion(): string { return this.req.httpVersion; }
  /**
   * What the client spoke: HTTP/2 (`%H` = http2), HTTP/1.x over TLS (the TLS ports hand their
   * sockets to node:http, which keeps the TLSSocket), or plain. Read when asked, like the rest.
   */
  get protocol(): Protocol {
    // h2.ts isH2, written out: h2-stream.ts reads this module, so this one does not import it.
    if (this.req.httpVersionMajor === 2 && (this.req as { h2Stream?: boolean }).h2Stream === true) return 'http2';
    return (this.req.socket as { encrypted?: boolean } | null)?.encrypted === true ? 'https' : 'http';
  }
  /** The URL as the access log shows it (cs-uri-stem, cs-uri-query). */
  get loggedUrl(): string { return this.logUrl ?? this.urlReceived; }
  get clientAddress(): string { return this.connection.clientAddress; }
  get clientPort(): number { return this.connection.clientPort; }
  get serverAddress(): string { return this.connection.serverAddress; }
  get serverPort(): number { return this.connection.serverPort; }

  /**
   * Wall-clock ms at receive, from the clock now and the monotonic time since (one clock read per
   * request instead of two; exact unless the wall clock was stepped meanwhile).
   */
  get startedAt(): number {
    return Math.round(Date.now() - (performance.now() - this.startMono));
  }

  /**
   * `x-ctx-id`: the UUID of the request chain. Made when first read (a transaction nobody logs
   * makes none); a sibling hand-off carries it to the owner, which sets it.
   */
  get ctxId(): string {
    return (this.ctx ??= newContextId());
  }

  set ctxId(id: string) {
    this.ctx = id;
  }

  /**
   * The answer's status line is being written (TxResponse, H2Response): the time to first byte,
   * and the session gauge counts it as sending (ClientActiveSession). Once only, and never after
   * finish: a stage can still write a head into a transaction that ended (a client that left
   * before its miss arrived), and finish has already taken it off the gauges then.
   */
  answerStarts(): void {
    if (this.firstByteMs >= 0 || this.totalMs >= 0) return;
    this.firstByteMs = performance.now() - this.startMono;
    if (this.sessionRow >= 0) workerCounters.answering(this.sessionRow);
  }

  // The fields few transactions set live on `more` (Occasional): a hit's record is that much
  // smaller, and it is one of the objects an HTTP/2 stream keeps alive into the old generation.
  // Setting one to its default when `more` is absent makes nothing.
  private occasional(): Occasional {
    return (this.more ??= new Occasional());
  }

  /** Arrived from a sibling worker (hash balance): already counted and X-Forwarded-For set there. */
  get fromSibling(): boolean { return this.more?.fromSibling ?? false; }
  set fromSibling(v: boolean) { if (v || this.more !== undefined) this.occasional().fromSibling = v; }
  /** Handed to this sibling worker index (hash balance), -1 when served here. */
  get handedTo(): number { return this.more?.handedTo ?? -1; }
  set handedTo(v: number) { if (v !== -1 || this.more !== undefined) this.occasional().handedTo = v; }
  /** Edits of the answer's fields by the front modify rules the request matched (modify.ts). */
  get responseEdits(): HeaderEdit[] | undefined { return this.more?.responseEdits; }
  set responseEdits(v: HeaderEdit[] | undefined) { if (v !== undefined || this.more !== undefined) this.occasional().responseEdits = v; }
  /** A cacheable POST's body, read whole (post-cache.ts): what its origin request sends. */
  get postBody(): Buffer | undefined { return this.more?.postBody; }
  set postBody(v: Buffer | undefined) { if (v !== undefined || this.more !== undefined) this.occasional().postBody = v; }
  /**
   * Fallbacks taken (fallback.ts): the status of each answer replaced, the host each routed to
   * (`x-fallback`, `%L`) and the serviceCode of the last one; undefined when none.
   */
  get fallback(): FallbackState | undefined { return this.more?.fallback; }
  set fallback(v: FallbackState | undefined) { if (v !== undefined || this.more !== undefined) this.occasional().fallback = v; }
  /** Serves the transaction again from the rule stages (a fallback); set for hosts with fallbacks. */
  get reroute(): Reroute | undefined { return this.more?.reroute; }
  set reroute(v: Reroute | undefined) { if (v !== undefined || this.more !== undefined) this.occasional().reroute = v; }
  /** URL rewrites applied (each one a routing; at most MAX_ROUTINGS), counted as URLRewrite. */
  get rewrites(): number { return this.more?.rewrites ?? 0; }
  set rewrites(v: number) { if (v !== 0 || this.more !== undefined) this.occasional().rewrites = v; }
  /** The URL the access log shows when a rewrite said `accessLogUrl: replace`. */
  get logUrl(): string | undefined { return this.more?.logUrl; }
  set logUrl(v: string | undefined) { if (v !== undefined || this.more !== undefined) this.occasional().logUrl = v; }
  /** x-hook / %F: '' the host has no hook, 'y' the hook was called, 'n' matchingList left it out. */
  get hookLinked(): '' | 'y' | 'n' { return this.more?.hookLinked ?? ''; }
  set hookLinked(v: '' | 'y' | 'n') { if (v !== '' || this.more !== undefined) this.occasional().hookLinked = v; }
  /** The hook's redefinition the transaction goes on with (hook.ts); undefined when none. */
  get hook(): HookRedefinition | undefined { return this.more?.hook; }
  set hook(v: HookRedefinition | undefined) { if (v !== undefined || this.more !== undefined) this.occasional().hook = v; }
  /**
   * A pagedesk edit (pagedesk.ts): what the fetch and pass-through stages ask instead of the
   * host's origin (the source through the cache, then the edit); undefined otherwise.
   */
  get pagedesk(): PagedeskRuntime | undefined { return this.more?.pagedesk; }
  set pagedesk(v: PagedeskRuntime | undefined) { if (v !== undefined || this.more !== undefined) this.occasional().pagedesk = v; }
  /** The setting trace of a request that ends in meta.settingTrace.keyword (setting-trace.ts). */
  get trace(): SettingTrace | undefined { return this.more?.trace; }
  set trace(v: SettingTrace | undefined) { if (v !== undefined || this.more !== undefined) this.occasional().trace = v; }

  /** The record without the live objects (req, res, host runtime): what a sink may keep or write. */
  toJSON(): TransactionJSON {
    return {
      sessionId: this.sessionId, ctxId: this.ctxId, host: this.host?.name ?? null, method: this.method,
      urlReceived: this.urlReceived, url: this.url, httpVersion: this.httpVersion, protocol: this.protocol,
      clientAddress: this.clientAddress, clientPort: this.clientPort, serverAddress: this.serverAddress, serverPort: this.serverPort,
      fromSibling: this.fromSibling, handedTo: this.handedTo, startedAt: this.startedAt, firstByteMs: this.firstByteMs,
      totalMs: this.totalMs, status: this.status, requestHeadBytes: this.requestHeadBytes, requestBodyBytes: this.requestBodyBytes,
      responseHeadBytes: this.responseHeadBytes, responseBodyBytes: this.responseBodyBytes, cacheResult: this.cacheResult ?? null,
      completed: this.completed, origin: this.origin?.toJSON() ?? null,
    };
  }
}

/** The fields of the record a sink may keep as they are (copied at finish). */
type PlainField = 'sessionId' | 'ctxId' | 'method' | 'urlReceived' | 'url' | 'httpVersion' | 'protocol'
  | 'clientAddress' | 'clientPort' | 'serverAddress' | 'serverPort' | 'fromSibling' | 'handedTo' | 'startedAt'
  | 'firstByteMs' | 'totalMs' | 'status' | 'requestHeadBytes' | 'requestBodyBytes' | 'responseHeadBytes'
  | 'responseBodyBytes' | 'completed';

/** TransactionRecord.toJSON: plain values only, the host by name, the origin trace as its own JSON. */
export type TransactionJSON = Pick<TransactionRecord, PlainField> & {
  host: string | null;
  cacheResult: CacheResult | null;
  origin: ReturnType<OriginTrace['toJSON']> | null;
};

/** A transaction routed to a virtual host: what the serving stages see. */
export interface Transaction extends TransactionRecord {
  host: HostRuntime;
  runtime: RuntimeState;
}

/** The request limits of frontEnd the receive step checks. */
export interface Limits { maxUrlLength: number; maxHeaderSize: number; maxHeaderCount: number }

interface Balance {
  mode: 'rr' | 'hash';
  ring: HashRing;
  hashKey: HashKeyFunction;
  /** balance.luaPath's hash(key): the ring point of a key, -1 when the script failed on it. */
  luaHash: LuaHash | undefined;
  selfIndex: number;
  /** The sibling port's client (hand-off.ts Siblings): hands a transaction to the URL's owner worker. */
  siblings: { forward(tx: Transaction, owner: number): void };
}

/**
 * What the steps of a worker read besides the transaction: the routing table, the limits, the
 * balance, the cache stage's entry and the driver to resume the table with (runtime-state.ts).
 */
export interface RuntimeState {
  table: VhostTable<HostRuntime>;
  limits: Limits;
  balance: Balance;
  /**
   * The lookup step's cache stage (lookup.ts CacheStage.serve): what it decided is on the
   * transaction (the stored copy, the fetch plan) and it returns the step that runs next.
   */
  serve: (tx: Transaction) => Next;
  /** The table's driver (steps.ts `runSteps`): a waiting transaction goes on from `step`. */
  resume: (tx: Transaction, step: DrivenStep) => void;
  /** meta.settingTrace.keyword when the trace is enabled. */
  traceKeyword: string | undefined;
}
