// The invalidation an unsafe method triggers (RFC 9111 4.4): a POST, PUT, DELETE ... that
// succeeded makes stale what it names (its target, the Location and Content-Location URIs, as
// cache keys) before its client sees the answer. It takes the node's one invalidation path
// (lib/cache/commands/invalidation-path.ts) as the API and the PURGE method do; the sides are:
//
//   settle:     nothing to wait for: step 3 logs the invalidation in the index, and a copy of
//               these URLs fetched before it that commits later (any worker) lands stale
//               (IndexDb.insertRow), so no fetch in flight has to be retired first;
//   apply:      this worker marks the URLs' rows and logs it in one index transaction
//               (DiskStore.invalidateUrls); the source's pagedesk edits are expired with them
//               (they revalidate through the source);
//   dropMemory: this worker's memory copies go and its fetches of them retire, then every
//               other worker's (Peers.invalidated), so the client's next request, through
//               whichever worker, cannot get the old copy.
//
// Invalidated means stale: the next use revalidates (a conditional request); the copy is kept.
import { invalidate, type InvalidationSides } from '../../cache/commands/invalidation-path.js';
import { runInvalidation, type InvalidateResult, type Invalidation } from '../../cache/commands/invalidate.js';
import type { Target } from '../../cache/commands/targets.js';
import type { StoredHeaders } from '../../cache/store.js';
import { invalidationTargets } from '../../cache/policy/index.js';
import { editTargetsOf } from '../../pagedesk/targets.js';
import type { CacheContext, Peers } from './context.js';
import { postAnswerTee, type BodyTee } from './post-answer.js';
import type { Transaction } from './transaction.js';

/** Who drops the memory copies: this worker (CacheStage.dropMemory), then its peers. */
export interface UnsafeSides {
  dropHere(i: Invalidation): void;
  peers: Peers | undefined;
}

const SETTLED: Promise<void> = Promise.resolve();
const NO_TARGETS: Target[] = [];

/**
 * Runs when the origin's answer to a passed-through request is known, before the client sees it:
 * invalidates what a success names, then the tee that stores a POST's reusable answer, if any.
 */
export async function invalidateAfterUnsafe(ctx: CacheContext, tx: Transaction, status: number,
  headers: Record<string, string | string[] | undefined>, sides: UnsafeSides): Promise<BodyTee | undefined> {
  if (status < 200 || status >= 400) return undefined;
  const named = invalidationTargets(tx.req.method!, status, tx.url, headers as StoredHeaders, tx.req.headers.host ?? tx.host.name);
  if (named.length === 0) return undefined;
  const rule = tx.host.net?.key;
  const urls = rule === undefined ? named : named.map(rule.url);
  const vhost = tx.host.name;
  // Copies of these URLs received before now land stale, whenever they commit.
  const at = Date.now();
  const keyword = tx.host.pagedesk?.keyword;
  const edits = keyword === undefined ? NO_TARGETS : editTargetsOf(vhost, urls, keyword);
  const targets: Target[] = urls.map((url) => ({ vhost, prefix: url, wildcard: false, text: url }));
  for (const e of edits) targets.push(e);
  const path: InvalidationSides = {
    settle: () => SETTLED,
    apply: (_kind, list) => markStale(ctx, vhost, list, at),
    dropMemory: async (items) => {
      for (const i of items) sides.dropHere(i);
      await sides.peers?.invalidated(items);
    },
  };
  // 'expire': stale, revalidated on next use; no host setting turns it into another command.
  await invalidate('expire', targets, path, noPurgeSettings);
  // A POST whose answer names its own URI as Content-Location: stored for later GETs.
  return postAnswerTee(ctx, tx, status, headers, at);
}

function noPurgeSettings(): undefined {
  return undefined;
}

/**
 * Step 3 for an unsafe method: the exact URLs marked and logged in one index transaction, the
 * edit patterns expired. An index unavailable (busy beyond its timeout) changes nothing here: the
 * memory copies still go. The count is not reported: the client gets the origin's answer.
 */
async function markStale(ctx: CacheContext, vhost: string, list: readonly Target[], at: number): Promise<InvalidateResult> {
  const started = Date.now();
  const urls: string[] = [];
  const patterns: Target[] = [];
  for (const t of list) {
    if (t.wildcard) patterns.push(t);
    else urls.push(t.prefix);
  }
  await ctx.store.disk.invalidateUrls(vhost, urls, at).catch(() => undefined);
  if (patterns.length > 0) await runInvalidation(ctx.store, 'expire', patterns).catch(() => undefined);
  return { Count: 0, Size: 0, Time: Date.now() - started };
}
