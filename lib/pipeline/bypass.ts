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
 * Whether the request was bypassed (then it is on its way to the origin). `before`: runs first
 * and calls its argument to go on (the hook, unless skipIfMatched.bypass).
 */
export function bypass(tx: Transaction, net: NetworkRules, before?: (go: () => void) => void): boolean {
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
  if (tx.bypass === 0) return false;
  tx.cacheResult = TCP_MISS;
  if (before === undefined) proxyToOrigin(tx);
  else before(() => proxyToOrigin(tx));
  return true;
}
