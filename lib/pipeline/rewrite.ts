// Stage "rewrite": the routed host's urlRewrites (document 2). The first entry whose pattern
// matches rewrites the URL; the result is routed again (to the host it names, or the same one)
// and that host's entries are tried again from the top, as nginx's `rewrite ... last` does. More
// than MAX_ROUTINGS rewrites end the request with 508 (a rule loop).
import { splitRewritten } from '../rules/rewrites.js';
import type { HostRuntime } from './parts/host-runtime.js';
import { ruleInput } from './parts/rule-input.js';
import { MAX_ROUTINGS, type TransactionRecord } from './parts/transaction.js';

/** Document 2: "Maximum routing count is 10". */
export const ROUTING_LOOP = 'loop';
export const ROUTING_LOOP_TEXT = `508 Loop Detected: urlRewrites rewrote this request more than ${MAX_ROUTINGS} times\n`;

/** A host by name (and the facade swap), as receive routes: undefined when none serves it. */
export type Router = (hostName: string) => HostRuntime | undefined;

const PATH = 'hosting.urlRewrites';

/** The host that serves after the rewrites, undefined for none (404), or ROUTING_LOOP. */
export function applyRewrites(tx: TransactionRecord, host: HostRuntime, route: Router): HostRuntime | undefined | typeof ROUTING_LOOP {
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
      const routed = route(next.host);
      if (routed === undefined) return undefined;
      current = routed;
      tx.trace?.visit(current.name);
    }
  }
}
