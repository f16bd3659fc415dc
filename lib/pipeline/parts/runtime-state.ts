// What the steps of a worker read besides the transaction: the routing table, the limits, the
// balance, the cache stage's entry and the driver to resume the table with. Built by
// the worker for each setting (lib/worker/worker.ts) and put on each transaction at receive, so
// a step that parks a transaction (the hook) can resume the table later without a closure over
// it, and a step routes by name without a router built per request.
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

/** The steps the driver runs (steps.ts); lookup's successors run inside the cache stage. */
export type DrivenStep = 'receive' | 'rewrite' | 'access' | 'pagedesk' | 'modify' | 'bypass' | 'hook' | 'lookup';

/** What a step returns: the step that runs next, or DONE (answered, handed on, or parked until a step resumes it). */
export const DONE = 'done';
export type Next = DrivenStep | typeof DONE;

export interface RuntimeState {
  table: VhostTable<HostRuntime>;
  limits: Limits;
  balance: Balance;
  /** The cache stage's entry (lookup.ts: then fetch, deliver), or plain proxying. */
  serve: (tx: Transaction) => void;
  /** The table's driver (steps.ts `runSteps`): a parked transaction goes on from `step`. */
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
