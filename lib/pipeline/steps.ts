// The request's steps in the order they run, written once, as Varnish writes its request steps
// in steps.h and runs them in cache_req_fsm.c: each step is one module of this folder and
// returns the name of the step that runs next, DONE when nothing more runs for the transaction
// before finish (answered, handed on, passed through), or SUSPENDED when it waits on something
// asynchronous (the hook, a disk read, a POST body, an origin fetch): what it waited on enters
// the driver again through RuntimeState.resume at the step it decided. What a step decides for a
// later one travels on the transaction (lookup's stored copy and fetch plan: parts/fetch-plan.ts).
// A step may skip ahead (access sends a deferred denial to the hook) but never goes back: a
// fallback's new pass enters the table again at rewrite (lookup.ts), and a client a shared fetch
// cannot answer enters fetch again for one of its own. finish runs when the response closes,
// entered here like every step. What is not a step lives in parts/. Hot path: the table is this
// module's switch; a request allocates nothing for it, a hit nothing to go from lookup to deliver.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { receiveStep } from './receive.js';
import { rewriteStep } from './rewrite.js';
import { accessStep } from './access.js';
import { pagedeskStep } from './pagedesk.js';
import { modifyStep } from './modify.js';
import { bypassStep } from './bypass.js';
import { hookStep } from './hook.js';
import { lookupStep } from './lookup.js';
import { fetchStep } from './fetch.js';
import { deliverStep } from './deliver.js';
import { finishStep } from './finish.js';
import { sendError } from './parts/respond.js';
import { SessionIds } from './parts/session-ids.js';
import { workerCounters } from './parts/counters.js';
import { TransactionRecord, type Transaction } from './parts/transaction.js';
import type { TxResponse } from './parts/tx-response.js';
import { DONE, SUSPENDED, type DrivenStep, type Next, type RuntimeState } from './parts/runtime-state.js';

/**
 * The table. The driver runs every step: receive to lookup as the request arrives, fetch and
 * deliver as lookup decided (again when a fetch's answer resumes a waiting client), finish when
 * the response closes, however the transaction ended. `.dependency-cruiser.mjs` builds its rule
 * stages-run-forward from this order.
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
    case 'fetch': return fetchStep(tx as Transaction);
    case 'deliver': return deliverStep(tx as Transaction);
    // A transaction no host took (404, 400 ...) ends here too.
    case 'finish': return finishStep(tx);
  }
}

/** The driver: runs the table from `from` until a step returns DONE or SUSPENDED. */
export function runSteps(tx: TransactionRecord, from: DrivenStep): void {
  let step: Next = from;
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    step = runStep(step, tx);
    if (step === DONE || step === SUSPENDED) return;
  }
  sendError(tx.res, 500, undefined, false, `500 Internal Server Error: the request steps did not end (at ${step})\n`);
}

/** What the driver keeps on a connection to reach finish for every transaction on it. */
interface QueuedConnection extends Socket {
  /** Pipelined transactions whose responses wait behind another one on this connection. */
  svcQueued?: TransactionRecord[];
  _httpMessage?: TxResponse | null;
}

/**
 * Makes the driver enter finish when the transaction ends, however it ends. One listener
 * function for all transactions: the response's 'close', which node emits once after 'finish'
 * and once when the connection dies under an unfinished response; the transaction is found on the
 * response (TxResponse.tx): no closure per request.
 */
function track(tx: TransactionRecord): void {
  const res = tx.res as TxResponse;
  res.tx = tx;
  // A service listener's response (TxResponse.onEnded) and an HTTP/2 one (H2Response.onEnded)
  // run a hook on their 'close': no listener table for an answer nobody else listens to.
  if ('onEnded' in res) res.onEnded = endOf;
  else (tx.res as NodeJS.EventEmitter).on('close', onResponseClose);
  // A pipelined request's response waits unassigned behind the one on the wire, and node never
  // emits its 'close' when the connection dies first: the connection's own 'close' ends it.
  if (res.socket === null) queueOnConnection(tx);
}

/** A response's 'close' (node's own ServerResponse; TxResponse and H2Response call endOf). */
function onResponseClose(this: TxResponse): void {
  endOf(this);
}

function endOf(res: TxResponse): void {
  const tx = res.tx;
  if (tx !== undefined) runSteps(tx, 'finish');
}

function queueOnConnection(tx: TransactionRecord): void {
  const socket = tx.req.socket as QueuedConnection;
  let queue = socket.svcQueued;
  if (queue === undefined) {
    queue = socket.svcQueued = [];
    socket.on('close', onConnectionClose);
  }
  // Those answered since: a long pipelined connection does not grow the list.
  while (queue.length > 0 && queue[0]!.totalMs >= 0) queue.shift();
  queue.push(tx);
}

function onConnectionClose(this: QueuedConnection): void {
  // The response on the wire first, so the bytes the connection wrote are counted as its own.
  const current = this._httpMessage?.tx;
  if (current !== undefined) runSteps(current, 'finish');
  const queue = this.svcQueued ?? [];
  this.svcQueued = undefined;
  for (const tx of queue) runSteps(tx, 'finish');
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
