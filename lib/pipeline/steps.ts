// The request's steps in the order they run, written once, as Varnish writes its request steps
// in steps.h and runs them in cache_req_fsm.c: each step is one module of this folder and
// returns the name of the step that runs next, or DONE when the transaction was answered, handed
// on, or parked (a step waiting on something asynchronous, the hook, resumes the table through
// RuntimeState.resume). A step may skip ahead (access sends a deferred denial to the hook) but
// never goes back: a fallback's new pass enters the table again at rewrite (lookup.ts). What is
// not a step lives in parts/. Hot path: the table is this module's switch; a request allocates
// nothing for it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { receiveStep } from './receive.js';
import { rewriteStep } from './rewrite.js';
import { accessStep } from './access.js';
import { pagedeskStep } from './pagedesk.js';
import { modifyStep } from './modify.js';
import { bypassStep } from './bypass.js';
import { hookStep } from './hook.js';
import { lookupStep } from './lookup.js';
import { track } from './finish.js';
import { sendError } from './parts/respond.js';
import { SessionIds } from './parts/session-ids.js';
import { workerCounters } from './parts/counters.js';
import { TransactionRecord, type Transaction } from './parts/transaction.js';
import { DONE, type DrivenStep, type Next, type RuntimeState } from './parts/runtime-state.js';

/**
 * The table. The driver runs receive to lookup; from lookup on the steps run inside the cache
 * stage (lookup.ts calls fetch.ts or deliver.ts, fetch.ts calls deliver.ts) as the answer
 * streams, and finish.ts runs when the response closes, however the transaction ended.
 * `.dependency-cruiser.mjs` builds its rule stages-run-forward from this order.
 */
const STEPS = Object.freeze([
  'receive', 'rewrite', 'access', 'pagedesk', 'modify', 'bypass', 'hook', 'lookup', 'fetch', 'deliver', 'finish',
] as const);

/** Each step runs at most once per pass: more turns than steps is a step going back. */
const MAX_TURNS = STEPS.length;

function runStep(step: DrivenStep, tx: TransactionRecord): Next {
  switch (step) {
    case 'receive': return receiveStep(tx);
    // receive routed the transaction to a host (or answered it): a Transaction from here on.
    case 'rewrite': return rewriteStep(tx as Transaction);
    case 'access': return accessStep(tx as Transaction);
    case 'pagedesk': return pagedeskStep(tx as Transaction);
    case 'modify': return modifyStep(tx as Transaction);
    case 'bypass': return bypassStep(tx as Transaction);
    case 'hook': return hookStep(tx as Transaction);
    case 'lookup': return lookupStep(tx as Transaction);
  }
}

/** The driver: runs the table from `from` until a step returns DONE. */
export function runSteps(tx: TransactionRecord, from: DrivenStep): void {
  let step: Next = from;
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    step = runStep(step, tx);
    if (step === DONE) return;
  }
  sendError(tx.res, 500, undefined, false, `500 Internal Server Error: the request steps did not end (at ${step})\n`);
}

/**
 * The worker's request entry: the transaction and its record are created and tracked first
 * (finish runs when it ends, however it ends: the error answers of receive are transactions
 * too), then the table runs from receive. `sessionIds`: the worker's allocator (blocks from the
 * primary); without one (in-process use) a local one that only has its fallback range.
 */
export function createHandler(getState: () => RuntimeState, sessionIds: SessionIds = new SessionIds()) {
  return function handle(req: IncomingMessage, res: ServerResponse, port: number | undefined): void {
    const tx = new TransactionRecord(req, res, sessionIds.take());
    track(tx);
    // A sibling's hand-off (the internal port: no `port`) is in the sibling's sessions already.
    if (port !== undefined) tx.sessionRow = workerCounters.begin();
    tx.runtime = getState();
    tx.port = port;
    runSteps(tx, 'receive');
  };
}
