// Invalidation through the HTTP method PURGE on the service port, as Varnish and Squid operators
// expect: allowed only when the host enables it (functions.network.cache.enablePurgeMethod) and
// the client's address has enablePurge in the management allowList. The method tokens EXPIRE and
// HARDPURGE are refused by the HTTP parser (501), so `X-Invalidate: expire | hardpurge` selects
// those operations on a PURGE. purge.purge2expire and purge.resCodeNoCtrlTarget apply as they do
// to /command/purge. "Every origin address excluded" is judged by the receiving worker's view.
import { effectiveKind, noTargetStatus } from '../cache/commands/purge-mode.js';
import { parseTargets, TargetError } from '../cache/commands/targets.js';
import { runInvalidation, type InvalidateKind, type InvalidateResult } from '../cache/commands/invalidate.js';
import type { AccessControl } from '../access/access.js';
import { PRODUCT_VERSION } from '../version.js';
import type { Transaction } from './transaction.js';
import type { InvalidationLog } from '../cache/invalidation-log.js';
import type { TieredStore } from '../cache/tiered-store.js';
import { TCP_DENIED, TCP_NONE } from '../cache/policy/results.js';

function answer(tx: Transaction, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  tx.status = status;
  tx.res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  tx.res.end(text);
}

export async function purgeByMethod(tx: Transaction, store: TieredStore, log: InvalidationLog | undefined,
  access: AccessControl | undefined, settle: (vhost: string, prefix: string) => Promise<void>): Promise<void> {
  const requested = String(tx.req.headers['x-invalidate'] ?? 'purge').toLowerCase();
  const valid = requested === 'purge' || requested === 'expire' || requested === 'hardpurge';
  const fail = (status: number, reason: string): void =>
    answer(tx, status, { version: PRODUCT_VERSION, method: valid ? requested : 'purge', status: 'fail', result: null, reason });
  const purge = tx.host.setting.functions.network.cache.purge;
  if (!tx.host.setting.functions.network.cache.enablePurgeMethod) return fail(405, 'PURGE is not enabled for this host');
  const addr = tx.req.socket.remoteAddress ?? '';
  if (access === undefined || !access.check(addr, '/command/purge').allowed) {
    tx.cacheResult = TCP_DENIED;
    return fail(401, 'Unauthorized');
  }
  if (!valid) return fail(400, `unknown X-Invalidate: ${requested}`);
  let targets;
  try {
    targets = parseTargets(tx.url, () => tx.host.name, tx.host.name);
  } catch (err) {
    if (err instanceof TargetError) return fail(400, err.message);
    throw err;
  }
  for (const t of targets) await settle(t.vhost, t.prefix);
  const asked = requested as InvalidateKind;
  const allExcluded = (): boolean => tx.host.origin.allExcluded();
  const total: InvalidateResult = { Count: 0, Size: 0, Time: 0 };
  for (const t of targets) {
    const r = await runInvalidation(store, log, effectiveKind(asked, t, purge.purge2expire), [t], { allExcluded });
    total.Count += r.Count; total.Size += r.Size; total.Time += r.Time;
  }
  tx.cacheResult = TCP_NONE;
  const status = total.Count === 0 ? noTargetStatus(targets, () => purge) : 200;
  answer(tx, status, { version: PRODUCT_VERSION, method: asked, status: 'OK', result: total, reason: null });
}
