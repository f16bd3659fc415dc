// Stage "rewrite": the routed host's urlRewrites (document 2). The first entry whose pattern
// matches rewrites the URL; the result is routed again (to the host it names, or the same one)
// and that host's entries are tried again from the top, as nginx's `rewrite ... last` does. More
// than MAX_ROUTINGS rewrites end the request with 508 (a rule loop).
import { splitRewritten } from '../rules/rewrites.js';
import type { HostRuntime } from './parts/host-runtime.js';
import { ruleInput } from './parts/rule-input.js';
import { MAX_ROUTINGS, type Transaction, type TransactionRecord } from './parts/transaction.js';
import { sendError } from './parts/respond.js';
import { DONE, routeByName, type Next } from './parts/runtime-state.js';

/** Document 2: "Maximum routing count is 10". */
const ROUTING_LOOP = 'loop';
const ROUTING_LOOP_TEXT = `508 Loop Detected: urlRewrites rewrote this request more than ${MAX_ROUTINGS} times\n`;

const PATH = 'hosting.urlRewrites';

/**
 * Step "rewrite", the first of the request rules; access control follows. A sibling's hand-off
 * went through both already (its URL is the rewritten one), unless a fallback here routed it
 * anew. A host without rules pays one property test.
 */
export function rewriteStep(tx: Transaction): Next {
  if (tx.host.rules === undefined || (tx.fromSibling && tx.fallback === undefined)) return 'pagedesk';
  const served = applyRewrites(tx, tx.host);
  if (served === ROUTING_LOOP) { sendError(tx.res, 508, undefined, false, ROUTING_LOOP_TEXT); return DONE; }
  // A rewrite to a host nobody serves: a 404 of no host, as for a request that named it.
  (tx as TransactionRecord).host = served;
  if (served === undefined) { sendError(tx.res, 404); return DONE; }
  return 'access';
}

/** The host that serves after the rewrites, undefined for none (404), or ROUTING_LOOP. */
function applyRewrites(tx: TransactionRecord, host: HostRuntime): HostRuntime | undefined | typeof ROUTING_LOOP {
  let current = host;
  for (;;) {
    const rules = current.rules?.rewrites;
    if (rules === undefined) return current;
    const input = ruleInput(tx);
    let captures: readonly string[] | undefined;
    let k = 0;
    for (; k < rules.length; k++) if ((captures = rules[k]!.pattern.match(input)) !== undefined) break;
    if (captures === undefined) return current;
    if (tx.rewrites === MAX_ROUTINGS) return ROUTING_LOOP;
    tx.rewrites++;
    const r = rules[k]!;
    tx.trace?.matched(current.name, PATH, r.entry);
    const next = splitRewritten(r.replace(captures), tx.ruleHost);
    tx.url = next.url;
    tx.logUrl = r.logRewritten ? next.url : undefined;
    if (next.host !== tx.ruleHost) {
      tx.ruleHost = next.host;
      const routed = routeByName(tx, next.host);
      if (routed === undefined) return undefined;
      current = routed;
      tx.trace?.visit(current.name);
    }
  }
}
