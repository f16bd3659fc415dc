// Stage "fallback" (hosting[].fallbacks), at deliver: an answer whose status (or an origin
// failure, `fail`) and fields match an entry is not sent; the request is routed to the entry's
// `replace` URL (this host or another) and served again from the rule stages on, so rewrites and
// access control see the new URL (document 2's redirect recipe). The code finally sent follows
// the entry's serviceCode. Routings count against the 10 of a request (urlRewrites included);
// past them the answer goes out as it is. GET and HEAD only (and cached POSTs, whose body is
// kept): another method's body is gone once its first answer comes.
import { findFallback } from '../../network/fallbacks.js';
import { splitRewritten } from '../../rules/rewrites.js';
import { ruleInput } from './rule-input.js';
import { MAX_ROUTINGS, type Transaction, type TransactionRecord } from './transaction.js';

const PATH = 'hosting.fallbacks';

type AnswerFields = Record<string, string | string[] | number | undefined>;

export type Found = NonNullable<ReturnType<typeof findFallback>>;

/**
 * The fallback entry for an answer (`status` -1: the origin exchange failed), or undefined.
 * `origin`: an origin answer (both phases) or a cached one (frontend only). Changes nothing.
 */
export function matchFallback(tx: Transaction, status: number, fields: AnswerFields, origin: boolean): Found | undefined {
  const rules = tx.host.fallbacks;
  if (rules === undefined || tx.reroute === undefined || tx.res.headersSent) return undefined;
  const method = tx.req.method;
  if (method !== 'GET' && method !== 'HEAD' && tx.postBody === undefined) return undefined;
  if (tx.rewrites + (tx.fallback?.hosts.length ?? 0) >= MAX_ROUTINGS) return undefined;
  return findFallback(rules, status, origin, ruleInput(tx), fields, tx.bypass === 2);
}

/** Whether a fallback replaced the answer (then the caller drops it); `sent`: the status it had. */
export function fallBack(tx: Transaction, status: number, sent: number, fields: AnswerFields, origin: boolean): boolean {
  const found = matchFallback(tx, status, fields, origin);
  if (found === undefined) return false;
  routeFallback(tx, found, sent);
  return true;
}

/** Routes the transaction where the entry says; its answer so far is dropped by the caller. */
export function routeFallback(tx: Transaction, found: Found, sent: number): void {
  const fb = tx.fallback;
  tx.trace?.matched(tx.host.name, PATH, found.rule.entry);
  const replace = found.rule.replace;
  const next = splitRewritten(replace === undefined ? tx.url : replace(found.captures), tx.ruleHost);
  const state = fb ?? (tx.fallback = { statuses: [], hosts: [], code: '#LAST' });
  state.statuses.push(sent);
  state.hosts.push(next.host);
  state.code = found.rule.serviceCode;
  const other = next.host !== tx.ruleHost;
  tx.url = next.url;
  tx.ruleHost = next.host;
  // The next answer is a new one: what the stages recorded of this one goes.
  tx.cacheResult = undefined;
  tx.bypass = 0;
  // Not from inside the caller (an origin client's parser callback, a lookup): the new pass may
  // start another origin request or answer at once.
  const reroute = tx.reroute!;
  queueMicrotask(() => reroute(other ? next.host : undefined));
}

/**
 * The status the client gets after fallbacks (TxResponse.writeHead): serviceCode of the last
 * entry that routed; never applied to 204, 206 or 304 (document 2), nor to an interim 1xx.
 */
export function serviceStatus(tx: TransactionRecord, status: number): number {
  const fb = tx.fallback;
  if (fb === undefined || status < 200 || status === 204 || status === 206 || status === 304) return status;
  const c = fb.code;
  if (c === '#LAST') return status;
  if (c === '#FIRST') return fb.statuses[0]!;
  if (c === '#BEFORE') return fb.statuses[fb.statuses.length - 1]!;
  return c;
}
