// Stage "access control" (functions.network.http.frontEnd.accessControl): the first matching
// entry allows, denies (403, TCP_DENIED) or redirects; no match takes the module's default.
import { MATCHED, subjectOf } from '../rules/conditions.js';
import type { CompiledAccess } from '../rules/access-control.js';
import { TCP_DENIED, TCP_NONE } from '../cache/policy/results.js';
import { ruleInput } from './rule-input.js';
import { sendError } from './respond.js';
import type { Transaction } from './transaction.js';

const PATH = 'functions.network.http.frontEnd.accessControl';

/** True when the stage answered the request (denied or redirected). */
export function checkAccess(tx: Transaction, ac: CompiledAccess): boolean {
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
    if (e.action === 'deny') return deny(tx);
    return redirect(tx, e.status, e.location(captures === MATCHED ? [subjectOf(input)] : captures));
  }
  if (ac.denyByDefault) return deny(tx);
  tx.access = 1;
  return false;
}

function deny(tx: Transaction): true {
  tx.access = 2;
  tx.cacheResult = TCP_DENIED;
  sendError(tx.res, 403);
  return true;
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
