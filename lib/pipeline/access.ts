// Stage "access control" (functions.network.http.frontEnd.accessControl): the first matching
// entry allows, denies (403, TCP_DENIED) or redirects; no match takes the module's default.
import { MATCHED, subjectOf } from '../rules/conditions.js';
import type { CompiledAccess } from '../rules/access-control.js';
import { TCP_DENIED, TCP_NONE } from '../cache/policy/results.js';
import { ruleInput } from './parts/rule-input.js';
import { sendError } from './parts/respond.js';
import type { Transaction } from './parts/transaction.js';
import { DONE, type Next } from './parts/runtime-state.js';
import { hookSelects } from './hook.js';

const PATH = 'functions.network.http.frontEnd.accessControl';

/**
 * Step "access". A denial of a request the host's hook selects waits for the hook
 * (skipIfMatched.accessControl false): its answer wins, and when it says continue the denial
 * stands (hook.ts sends it).
 */
export function accessStep(tx: Transaction): Next {
  const ac = tx.host.rules?.access;
  if (ac === undefined) return 'pagedesk';
  const hook = tx.host.hook;
  const defer = hook !== undefined && !hook.skipAccess && hookSelects(tx, hook);
  if (!checkAccess(tx, ac, defer)) return 'pagedesk';
  return defer && tx.access === 2 && !tx.res.headersSent ? 'hook' : DONE;
}

/**
 * True when the stage answered the request (denied or redirected). `deferDeny`: a denial is
 * recorded but not sent (the hook is called first).
 */
function checkAccess(tx: Transaction, ac: CompiledAccess, deferDeny = false): boolean {
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
