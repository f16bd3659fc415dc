// Stage "access control" (functions.network.http.frontEnd.accessControl): the first matching
// entry allows, denies (403, TCP_DENIED) or redirects; no match takes the module's default.
import { MATCHED, subjectOf } from '../rules/conditions.js';
import type { CompiledAccess } from '../rules/access-control.js';
import { TCP_DENIED, TCP_NONE } from '../cache/policy/results.js';
import { ruleInput } from './parts/rule-input.js';
import { sendError } from './parts/respond.js';
import type { Transaction } from './parts/transaction.js';

const PATH = 'functions.network.http.frontEnd.accessControl';

/**
 * True when the stage answered the request (denied or redirected). `deferDeny`: a denial is
 * recorded but not sent (the hook is called first: skipIfMatched.accessControl false); the
 * caller sends it with sendDenied.
 */
export function checkAccess(tx: Transaction, ac: CompiledAccess, deferDeny = false): boolean {
  const input = ruleInput(tx);
  const entries = ac.entries;
  for (let k = 0; k < entries.length; k++) {
    const e = entries[k]!;
    const captures = e.pattern.match(input);
    if (captures === undefined) continue;
    tx.trace?.matched(tx.host.name, PATH, e.entry);
    if (e.action === 'allow') {
      tx.access = 1;
      return false;
    }
    if (e.action === 'deny') return deny(tx, deferDeny);
    return redirect(tx, e.status, e.location(captures === MATCHED ? [subjectOf(input)] : captures));
  }
  if (ac.denyByDefault) return deny(tx, deferDeny);
  tx.access = 1;
  return false;
}

function deny(tx: Transaction, defer: boolean): true {
  tx.access = 2;
  tx.cacheResult = TCP_DENIED;
  if (!defer) sendError(tx.res, 403);
  return true;
}

/** The 403 of a denial that waited for the hook. */
export function sendDenied(tx: Transaction): void {
  tx.cacheResult = TCP_DENIED;
  sendError(tx.res, 403);
}

function redirect(tx: Transaction, status: number, location: string): true {
  tx.access = 2;
  tx.cacheResult = TCP_NONE;
  const body = `${status} redirected to ${location}\n`;
  try {
    tx.res.writeHead(status, {
      location, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store',
    });
  } catch {
    // A location no field may carry (a control character the setting wrote): node refuses it.
    sendError(tx.res, 500, undefined, false, '500 Internal Server Error: the accessControl redirect location is not a valid field value\n');
    return true;
  }
  tx.res.end(tx.method === 'HEAD' ? undefined : body);
  return true;
}
