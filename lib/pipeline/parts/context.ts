// What the cache stages of one worker share: the store, the fetches in flight, limits, and the
// other workers of the node.
import type { Invalidation } from '../../cache/commands/invalidate.js';
import type { Target } from '../../cache/commands/targets.js';
import type { PurgeCall } from '../../ipc/messages.js';
import type { TieredStore } from '../../cache/tiered-store.js';
import type { CacheKey } from '../../cache/store.js';
import type { InflightTable } from './inflight.js';
import type { Transaction } from './transaction.js';
import type { Clock } from './clock.js';

/**
 * The cache stages lookup put on the transaction (tx.cache): the one place the record's untyped
 * slot is read as what it is (transaction.ts says why it is not typed there).
 */
export function cacheOf(tx: Transaction): CacheContext {
  return tx.cache as CacheContext;
}

export interface CacheContext {
  store: TieredStore;
  /** Where the cache stages read the time: a stored copy's age, its freshness, its times. */
  clock: Clock;
  inflight: InflightTable;
  /** Bytes of an object in flight kept for clients that join late. */
  maxReplayBytes: number;
  /** Objects whose origin answered a Range with 200: not fetched in pieces (pieces.ts). */
  noRanges: Set<string>;
  /** Serves a miss from pieces (set by the cache stage; fetch.ts hands over objects too large to store whole). */
  toPieces: (tx: Transaction, key: CacheKey) => void;
  /** A miss fetched and stored whole (fetch.ts; set by the cache stage): pieces.ts hands over an object whose origin ignores Range. */
  fetchWhole: (tx: Transaction, key: CacheKey, mayStore: boolean) => void;
}

/**
 * The other workers of the node, whose memory tiers an invalidation must reach before it is
 * answered (lib/worker implements it over IPC). Both resolve, bounded, whatever the others do.
 */
export interface Peers {
  /** Every other worker dropped its memory copies of these and retired its fetches of them. */
  invalidated(items: Invalidation[]): Promise<void>;
  /** Every other worker retired its fetches under the targets; the writes already ending landed. */
  settle(targets: Target[]): Promise<void>;
  /** A PURGE this worker accepted, before it runs: the node's fleet forwards it (propagation). */
  purgeRecognized(call: PurgeCall): void;
}
