// IPC between the primary and the RT workers: control (setting, ring, drain, the workers' part of
// an invalidation), never per-request traffic. Log lines travel on their own pipe (lib/log/pipe.ts).
import type { InvalidateKind, InvalidateResult, Invalidation } from '../cache/commands/invalidate.js';
import type { OriginStatus } from '../origin/index.js';
import type { Setting } from '../setting/types.js';
import type { WireTarget } from './wire.js';
import type { DirectReport, LogFiles } from '../log/direct.js';

/** One target of a waiting asynchronous command as it crosses IPC: what it will do there, and since when. */
export interface PrectrlWireEntry { vhost: string; kind: InvalidateKind; target: WireTarget; queuedAt: number }

/** Entries of one `prectrl-add` message at most: a message is serialised (and parsed) in a few milliseconds. */
export const PRECTRL_SLICE = 2000;

/** A PURGE on a service port as received, for the primary to forward to the peers. */
export interface PurgeCall {
  /** Request target as received. */
  target: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The service port it arrived on. */
  port: number;
}

/** What a worker's TLS sockets serve (`tls-status`): host name -> null (serving) or why not. */
export type TlsHostStatus = Record<string, string | null>;

/**
 * The commands a worker serves over RPC (lib/ipc/rpc.ts): name -> what the primary sends and
 * what the worker answers. The worker's handlers (worker/control.ts, 'drop-hosts' in
 * worker/worker.ts) and the primary's calls (primary/rt-bridge.ts, primary/primary.ts) are both
 * typed by it.
 */
interface RpcOps {
  /** This worker's view of the origins of one host, or of every host. */
  'origin-status': { args: { vhost?: string }; result: OriginStatus[] };
  'reset-origin': { args: { vhost?: string }; result: null };
  /**
   * Before the index is changed: this worker's fetches under the targets retire (they do not
   * store), and those whose write was already ending have landed.
   */
  settle: { args: { targets: WireTarget[] }; result: null };
  /** After an invalidation: this worker's memory copies of what it names are gone. */
  'drop-memory': { args: { items: Invalidation[] }; result: null };
  /** The hosts (of those given) whose every origin address this worker excludes. */
  'all-excluded': { args: { vhosts: string[] }; result: string[] };
  invalidate: { args: { kind: InvalidateKind; targets: WireTarget[]; sec?: number; before?: number; excluded?: string[] }; result: InvalidateResult };
  /**
   * Pre-cache control (the asynchronous commands waiting in the primary's queue) as changes, never
   * the whole list (lib/primary/prectrl-feed.ts): more entries of command `id` (a slice of at most
   * PRECTRL_SLICE), the command ran or was dropped, the queue was reset, a host's pre-cache
   * control was reset (its waiting entries stop counting).
   */
  'prectrl-add': { args: { id: number; entries: PrectrlWireEntry[] }; result: null };
  'prectrl-drop': { args: { id: number }; result: null };
  'prectrl-clear': { args: Record<string, never>; result: null };
  'prectrl-host-off': { args: { vhost: string }; result: null };
  fileinfo: { args: { vhost: string; url: string }; result: Record<string, unknown>[] };
  /** Content of hosts removed from hosting[]; the number of objects deleted. */
  'drop-hosts': { args: { names: string[]; diskToo: boolean }; result: number };
  /** Per host of this worker's TLS sockets: null when served, else why not (`/get/https`). */
  'tls-status': { args: Record<string, never>; result: TlsHostStatus };
}

export type RpcOp = keyof RpcOps;
export type RpcArgs<K extends RpcOp> = RpcOps[K]['args'];
export type RpcResult<K extends RpcOp> = RpcOps[K]['result'];

/** One RPC request as it crosses IPC (a union over the operations, so `op` and `args` agree). */
export type RpcRequest = { [K in RpcOp]: { type: 'rpc'; id: number; op: K; args: RpcArgs<K> } }[RpcOp];

/**
 * The environment variable a worker gets the primary's per-start secret of the sibling ports in
 * (set at fork, before any message: the worker needs it to open its internal port).
 */
export const SIBLING_SECRET_ENV = 'SVC_SIBLING_SECRET';

export type PrimaryMessage =
  | SessionIdMessage
  /**
   * `changedHosts`: the hosts whose runtime (origin pool, health state) is rebuilt; the others
   * keep theirs (meta.setting.deploy `shared`). 'all' rebuilds every host (`exclusive`, start).
   */
  | { type: 'setting'; setting: Setting; baseDir: string; generation: number; changedHosts: string[] | 'all' }
  | { type: 'ring'; members: number[] }
  /** Run-time `origin.address` of hosts (features.nodelist); sent whole, before the first setting too. */
  | { type: 'origin-address'; hosts: Record<string, string[]> }
  /** The node's TLS session ticket keys (48 bytes, base64): sent before the first setting and at each rotation. */
  | { type: 'tls-ticket-keys'; keys: string }
  | { type: 'drain'; timeoutMs: number }
  /** What a worker's `invalidated` or `settle-all` (same id) asked is done. */
  | { type: 'done'; id: number }
  /**
   * Answer to `listen-request`: the socket travels with the message (a bound TCP handle) unless
   * `error` says why it cannot be had (EADDRINUSE ...).
   */
  | { type: 'listen-handle'; id: number; error?: string }
  /**
   * The current file of every host log route (`kind host`), which the worker appends its batches
   * to (lib/log/direct.ts); answered by `log-files-switched` once the previous files are let go.
   */
  | { type: 'log-files'; generation: number; files: LogFiles }
  | RpcRequest;

export type WorkerMessage =
  | SessionIdRequest
  | StatsDeltasMessage
  | { type: 'hello' }
  /** The listening socket of host:port (host null: every address), from the supervisor. */
  | { type: 'listen-request'; id: number; host: string | null; port: number }
  /** This worker no longer uses the socket of host:port. */
  | { type: 'unlisten'; host: string | null; port: number }
  | { type: 'ready'; generation: number }
  | { type: 'apply-error'; generation: number; message: string }
  /** Sent instead of `ready` when a listening socket of that generation could not be opened. */
  | { type: 'listen-error'; generation: number; errors: string[] }
  /**
   * This worker invalidated content (an unsafe method, a PURGE) and dropped its own memory copies:
   * every other worker is to drop theirs ('drop-memory'). Answered by `done` once all of them
   * acknowledged; a worker that exits is not waited for, nor one past the primary's bound.
   */
  | { type: 'invalidated'; id: number; items: Invalidation[] }
  /** A PURGE is about to change the index: every other worker is to 'settle'; answered by `done`. */
  | { type: 'settle-all'; id: number; targets: WireTarget[] }
  /** A PURGE accepted on a service port, before it runs: the primary forwards it (fleet propagation). No answer. */
  | ({ type: 'purge-recognized' } & PurgeCall)
  /** The direct log writer: switched to a generation of `log-files`, or a file failing. */
  | DirectReport
  | { type: 'rpc-result'; id: number; ok: true; result: RpcResult<RpcOp> }
  | { type: 'rpc-result'; id: number; ok: false; error?: string; code?: string };

// Session ids (document 3 `session-id`): the primary owns the node's counter and hands out
// blocks; a worker asks for the next block while half of its current one is left
// (lib/pipeline/parts/session-ids.ts), never per request.

/** Worker -> primary: one more block of session ids, please. */
interface SessionIdRequest { type: 'session-ids-request' }

/** Primary -> worker: the ids [start, start + count) are this worker's alone. */
interface SessionIdMessage { type: 'session-ids'; start: number; count: number }

// Statistics (issue 12): a worker's counters reach the primary as deltas, once a second
// (lib/worker/stats-reporter.ts -> lib/stats/aggregate.ts), never per request. Deltas, not
// totals, so a worker that restarts (counting from zero again) never makes a node counter go
// backwards or count twice.

/**
 * Worker -> primary: what the worker counted since its previous message. `values` holds
 * `hosts.length` rows of `stride` numbers in the layout of lib/record/counter-layout.ts (row 0: the
 * transactions no virtual host took). Not sent when nothing was counted.
 */
/** What a worker has now (not deltas): each message replaces the previous one of that worker. */
export interface WorkerGauges {
  /** Client connections open (TLS handshakes included), and those with a request in progress. */
  serverSockets: number;
  serverBusy: number;
  /** Mean event-loop delay over the last second, 0.01 ms. */
  eventLoopLag: number;
  /** Object writes and index changes handed to the disk writer and not yet done. */
  waitingWrites: number;
  /** Each cache disk's status as this worker's store sees it (env.cache.disks order). */
  disks: string[];
}

/**
 * Once a second from each worker: `values` are counter deltas (rows of `stride`, one per host
 * name, row 0 no host); `gauges` the host gauges now (rows of HOST_GAUGE_STRIDE, same rows).
 */
export interface StatsDeltasMessage {
  type: 'stats-deltas'; stride: number; hosts: string[]; values: number[];
  gaugeStride: number; gauges: number[]; node: WorkerGauges;
}
