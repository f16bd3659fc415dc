// What the steps of a worker read besides the transaction: the routing table, the limits, the
// balance, the cache stage's entry and the driver to resume the table with (RuntimeState, whose
// shape lives with the transaction's in transaction.ts: each names the other). Built by
// the worker for each setting (lib/worker/worker.ts) and put on each transaction at receive, so
// a step that waits (the hook, a disk read, an origin fetch) can resume the table later without a
// closure over it, and a step routes by name without a router built per request.
import type { HostRuntime } from './host-runtime.js';
import type { Transaction, TransactionRecord } from './transaction.js';
import { sendError } from './respond.js';

export type { Limits, RuntimeState } from './transaction.js';
export { DONE, SUSPENDED, type DrivenStep, type Next } from './step-names.js';

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
