// What the steps of a worker read besides the transaction: the routing table, the limits, the
// balance, the cache stage's entry and the driver to resume the table with. Built by
// the worker for each setting (lib/worker/worker.ts) and put on each transaction at receive, so
// a step that waits (the hook, a disk read, an origin fetch) can resume the table later without a
// closure over it, and a step routes by name without a router built per request.
import type { HashRing } from '../../balance/ring.js';
import type { HashKeyFunction } from '../../balance/hash-key.js';
import type { LuaHash } from '../../balance/lua-hash.js';
import type { VhostTable } from '../../routing/vhost-table.js';
import type { HostRuntime } from './host-runtime.js';
import type { Siblings } from './hand-off.js';
import type { Transaction, TransactionRecord } from './transaction.js';
import { sendError } from './respond.js';

export interface Limits { maxUrlLength: number; maxHeaderSize: number; maxHeaderCount: number }

interface Balance {
  mode: 'rr' | 'hash';
  ring: HashRing;
  hashKey: HashKeyFunction;
  /** balance.luaPath's hash(key): the ring point of a key, -1 when the script failed on it. */
  luaHash: LuaHash | undefined;
  selfIndex: number;
  siblings: Siblings;
}

/** The steps of the table (steps.ts `STEPS`), every one run by the driver. */
export type DrivenStep = 'receive' | 'rewrite' | 'access' | 'pagedesk' | 'modify' | 'bypass' | 'hook' | 'lookup' | 'fetch' | 'deliver' | 'finish';

/** A step's return when nothing more runs for the transaction before finish: answered, handed on, passed through. */
export const DONE = 'done';
/**
 * A step's return when it waits (the hook's call, a disk read, a POST body, an origin fetch):
 * what it waits on enters the driver again (RuntimeState.resume) at the step that runs next, or
 * answers the transaction itself (a fetch streaming its new answer to every client waiting).
 */
export const SUSPENDED = 'suspended';
/** What a step returns: the step that runs next, DONE, or SUSPENDED. */
export type Next = DrivenStep | typeof DONE | typeof SUSPENDED;

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

/** A host by name as receive routes it: a facade serves as the host it names. */
export function routeByName(tx: TransactionRecord, name: string): HostRuntime | undefined {
  const h = tx.runtime!.table.route(name, tx.port, tx.localAddress);
  return h?.facade ?? h;
}

/** A fallback's new pass: routed to the host it names (404 when none serves it), then the rules again. */
export function rerouteOf(tx: Transaction): (hostName: string | undefined) => void {
  return (name) => {
    if (name !== undefined) {
      const h = routeByName(tx, name);
      if (h === undefined) { sendError(tx.res, 404); return; }
      tx.host = h;
    }
    tx.runtime.resume(tx, 'rewrite');
  };
}
