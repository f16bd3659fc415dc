// What the rule conditions (lib/rules/conditions.ts) read of a transaction: one object per worker,
// refilled for each rule stage that runs, so matching allocates nothing but the subject string.
import type { RuleInput } from '../rules/conditions.js';
import type { TransactionRecord } from './transaction.js';

const NO_FUNCTIONS: readonly string[] = [];
const input: RuleInput = { subject: '', method: '', headers: {}, protocol: 'http', clientAddress: '', functions: NO_FUNCTIONS };

/**
 * `subject` is the host the rules see (tx.ruleHost) and the URL. Function chains are not served
 * yet (no function is ever called), so `functions` is always empty: FUNCTION[...] matches nothing.
 */
export function ruleInput(tx: TransactionRecord): RuleInput {
  input.subject = tx.ruleHost + tx.url;
  input.method = tx.method;
  input.headers = tx.req.headers;
  input.protocol = tx.protocol;
  input.clientAddress = tx.clientAddress;
  return input;
}
