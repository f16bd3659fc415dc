// Stage "bypass" (functions.network.http.frontEnd.bypass): a request matching a bypass entry,
// or carrying no-cache when noCacheRequest is on, goes to the origin as a pass-through: no
// lookup, nothing stored, no coalescing. Recorded as `Bypass` (`Bypass/instant` for an instant
// entry) in sc-resinfo and cs-reqinfo and counted in UrlBypass. Bypass by method (POST) is the
// cache stage's: it keeps the unsafe-method invalidation of RFC 9111 4.4.
import type { IncomingHttpHeaders } from 'node:http';
import type { NetworkRules } from '../network/rules.js';
import { ruleInput } from './parts/rule-input.js';
import { proxyToOrigin } from './parts/proxy.js';
import type { Transaction } from './parts/transaction.js';
import { TCP_MISS } from '../cache/policy/results.js';
import { DONE, type Next } from './parts/runtime-state.js';
import { hookSelects } from './hook.js';

const PATH = 'functions.network.http.frontEnd.bypass';
const NO_CACHE_ENTRY = { noCacheRequest: { enable: true } };

/** Cache-Control: no-cache, or Pragma: no-cache without a Cache-Control (RFC 9111 5.4). */
function asksNoCache(h: IncomingHttpHeaders): boolean {
  const cc = h['cache-control'];
  if (cc !== undefined) return /(?:^|,)\s*no-cache\s*(?:,|$|=)/i.test(cc);
  const p = h.pragma;
  return p !== undefined && /(?:^|,)\s*no-cache\s*(?:,|$)/i.test(p);
}

/**
 * Step "bypass": a bypassed request goes to the origin, after the hook when the hook selects it
 * (unless skipIfMatched.bypass); the others go on to the hook step. A sibling's hand-off had the
 * network rules applied by the worker its client talked to.
 */
export function bypassStep(tx: Transaction): Next {
  const net = tx.host.net;
  if (net === undefined || tx.fromSibling || (net.bypass === undefined && !net.bypassNoCache) || !bypassed(tx, net)) return 'hook';
  tx.cacheResult = TCP_MISS;
  const hook = tx.host.hook;
  if (hook !== undefined && !hook.skipBypass && hookSelects(tx, hook)) return 'hook';
  proxyToOrigin(tx);
  return DONE;
}

/** Whether a bypass entry or the no-cache request applies (recorded in tx.bypass). */
function bypassed(tx: Transaction, net: NetworkRules): boolean {
  const list = net.bypass;
  if (list !== undefined) {
    const input = ruleInput(tx);
    for (const r of list) {
      if (r.pattern.match(input) === undefined) continue;
      tx.bypass = r.instant ? 2 : 1;
      tx.trace?.matched(tx.host.name, PATH, r.entry);
      break;
    }
  }
  if (tx.bypass === 0 && net.bypassNoCache && asksNoCache(tx.req.headers)) {
    tx.bypass = 1;
    tx.trace?.matched(tx.host.name, PATH, NO_CACHE_ENTRY);
  }
  return tx.bypass !== 0;
}
