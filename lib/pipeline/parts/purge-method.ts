// Invalidation through the HTTP method PURGE on the service port, as Varnish and Squid operators
// expect: allowed only when the host enables it (functions.network.cache.enablePurgeMethod) and
// the client's address has enablePurge in the management allowList. The method tokens EXPIRE and
// HARDPURGE are refused by the HTTP parser (501), so `X-Invalidate: expire | hardpurge` selects
// those operations on a PURGE. A PURGE that carries the host's tag fields (functions.network.
// cache.tags.fields: `Surrogate-Key:` / `Cache-Tag:`) purges those tags on its host instead of
// its URL. purge.purge2expire and purge.resCodeNoCtrlTarget apply as they do
// to /command/purge. "Every origin address excluded" is judged by the receiving worker's view.
// The steps are those of every invalidation (lib/cache/commands/invalidation-path.ts): every
// worker's fetches of the targets settle before the index changes and every worker's memory
// copies are gone before the answer.
import { invalidate } from '../../cache/commands/invalidation-path.js';
import { isBadTarget, parseTargets, tagTargets, type Target } from '../../cache/commands/targets.js';
import { splitTags, tagProblem } from '../../cache/tags.js';
import { keyTargets } from '../../cache/key.js';
import { withEditTargets } from '../../pagedesk/targets.js';
import { runInvalidation, type InvalidateKind, type Invalidation } from '../../cache/commands/invalidate.js';
import type { AccessControl } from '../../access/access.js';
import { PRODUCT_VERSION } from '../../version.js';
import type { Transaction } from './transaction.js';
import type { PurgeCall } from '../../ipc/messages.js';
import type { TieredStore } from '../../cache/tiered-store.js';
import { TCP_DENIED, TCP_NONE } from '../../cache/policy/results.js';

/** What the other workers (and this one's fetches in flight) do around the command. */
export interface PurgeSides {
  /** Before the index changes: the fetches under the targets retire, the ending writes land. */
  settle(targets: Target[]): Promise<void>;
  /** After: the other workers drop their memory copies (this one's went with the command). */
  announce(items: Invalidation[]): Promise<void>;
  /** Accepted, before it runs: the fleet forwards it to the peers (no wait). */
  recognized(call: PurgeCall): void;
}

/**
 * The tags a PURGE names in the host's tag fields (Surrogate-Key, Cache-Tag by default), each
 * value split as an origin's; undefined when it names none (then it purges its URL).
 */
function requestTags(tx: Transaction): string[] | undefined {
  const fields = tx.host.tags?.fields;
  if (fields === undefined) return undefined;
  let tags: string[] | undefined;
  for (const f of fields) {
    const v = tx.req.headers[f];
    if (v === undefined) continue;
    for (const value of Array.isArray(v) ? v : [v]) {
      const split = splitTags(value);
      (tags ??= []).push(...(split.length === 0 ? [''] : split));
    }
  }
  return tags;
}

function answer(tx: Transaction, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  tx.status = status;
  tx.res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  tx.res.end(text);
}

export async function purgeByMethod(tx: Transaction, store: TieredStore, access: AccessControl | undefined, sides: PurgeSides): Promise<void> {
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
  const tagged = requestTags(tx);
  let targets;
  try {
    if (tagged !== undefined) {
      const problem = tagProblem(tagged);
      if (problem !== undefined) return fail(400, problem);
    }
    // As cache keys: the host's cachingKey applies to the URL the client names.
    const net = tx.host.net;
    const parsed = parseTargets(tx.url, () => tx.host.name, tx.host.name);
    const keyed = net === undefined ? parsed : keyTargets(parsed, () => ({ rule: net.key, post: net.post !== undefined }));
    const keyword = tx.host.pagedesk?.keyword;
    targets = keyword === undefined ? keyed : withEditTargets(keyed, () => keyword);
    if (tagged !== undefined) targets = tagTargets([...new Set(tagged)], [tx.host.name]);
  } catch (err) {
    if (isBadTarget(err)) return fail(400, err.message);
    throw err;
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(tx.req.headers)) if (typeof v === 'string') headers[k] = v;
  sides.recognized({ target: tx.urlReceived, headers, port: tx.serverPort });
  const asked = requested as InvalidateKind;
  const allExcluded = (): boolean => tx.host.origin.allExcluded();
  // The node's one invalidation path, its steps taken by this worker and its peers.
  const { result: total, status } = await invalidate(asked, targets, {
    settle: (list) => sides.settle(list),
    apply: (k, list) => runInvalidation(store, k, list, { allExcluded }),
    dropMemory: (items) => sides.announce(items),
  }, () => purge);
  tx.cacheResult = TCP_NONE;
  answer(tx, status, { version: PRODUCT_VERSION, method: asked, status: 'OK', result: total, reason: null });
}
