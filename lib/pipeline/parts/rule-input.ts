// What the rule conditions (lib/rules/conditions.ts) read of a transaction: one object per worker,
// refilled for each rule stage that runs, so matching allocates nothing but the subject string.
import type { RuleInput } from '../../rules/conditions.js';
import type { TransactionRecord } from './transaction.js';

const NO_FUNCTIONS: readonly string[] = [];
const input: RuleInput = { host: '', url: '', subject: undefined, method: '', headers: {}, protocol: 'http', clientAddress: '', functions: NO_FUNCTIONS };

let lastTx: TransactionRecord | undefined;

/**
 * `host` is the host the rules see (tx.ruleHost), `url` the URL. Function chains are not served
 * yet (no function is ever called), so `functions` is always empty: FUNCTION[...] matches nothing.
 */
export function ruleInput(tx: TransactionRecord): RuleInput {
  // The access stage after a rewrite stage that changed nothing reuses a joined subject.
  if (tx !== lastTx || tx.url !== input.url || tx.ruleHost !== input.host) {
    lastTx = tx;
    input.url = tx.url;
    input.host = tx.ruleHost;
    input.subject = undefined;
  }
  input.method = tx.method;
  input.headers = tx.req.headers;
  input.protocol = tx.protocol;
  input.clientAddress = tx.clientAddress;
  return input;
}
