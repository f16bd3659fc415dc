// What the lookup step decides and the fetch and deliver steps act on, carried on the
// transaction from one step to the next as the step table carries every decision (steps.ts):
// lookup, or a fetch's answer for the clients waiting on it, puts the plan or the stored copy
// on the transaction and the driver runs the step. A part, so that the steps and the parts that
// answer waiting clients (refresh.ts) share it without importing a step.
import type { CachedObject, CacheEntryMeta, CacheKey, StoredHeaders } from '../../cache/store.js';
import type { CacheResult, RequestControl } from '../../cache/policy/index.js';
import type { SharedFetch } from './inflight.js';
import type { Transaction } from './transaction.js';

/** A fetch of the whole object from the origin, stored as it streams (fetch.ts). */
export interface FetchPlan {
  key: CacheKey;
  /** Validators of a stored copy for a conditional refresh. */
  conditional?: Record<string, string>;
  /**
   * Where the fetch is registered for others to join (default: the URL). A refresh registers
   * under its stored variant (refreshKey): only refreshes of that variant may join it, since a
   * 304 or a stale fallback answers them all with that variant.
   */
  joinKey?: string;
  /** A stored copy with a validator is being refreshed: an origin 5xx must not replace it. */
  keepStoredOnError?: boolean;
  /** Status for the waiting clients when the origin cannot be reached (default: the error's). */
  unreachableStatus?: number;
  /** False when the client's own request forbids storing (request no-store). */
  mayStore: boolean;
  /** Result recorded for clients served by a new full answer. */
  result: CacheResult;
  /**
   * Sees the origin's answer first (status -1: the origin failed). Returns true when it served
   * the waiting clients itself (a 304 refresh, stale content on error); it may serve some and
   * leave the others waiting, then returns false.
   */
  intercept?: (status: number, headers: StoredHeaders, f: SharedFetch) => boolean;
  /**
   * A refresh in the background (stale-while-revalidate): `tx`, answered from its stored copy,
   * only shapes the origin request and selects the variant; it does not wait for this fetch.
   * None is started while one is in flight under the join key.
   */
  background?: boolean;
  /**
   * This client may not share a fetch in flight (it selects another Vary variant than the one
   * being fetched); its fetch is not offered to others either.
   */
  alone?: boolean;
  pieces?: undefined;
}

/** A GET served from stored spans and fetched in pieces for what they lack (pieces.ts). */
interface PiecesPlan {
  key: CacheKey;
  /** The URL's entries (spans of a partially stored object among them). */
  pieces: readonly CacheEntryMeta[];
  control: RequestControl;
}

/** The fetch step's work for the transaction. */
export type Plan = FetchPlan | PiecesPlan;

/** Lookup's plan for the fetch step (tx.plan, untyped on the record: transaction.ts says why). */
export function planFetch(tx: Transaction, plan: Plan): 'fetch' {
  tx.plan = plan;
  return 'fetch';
}

/** The fetch step takes the plan it runs. */
export function takePlan(tx: Transaction): Plan {
  const plan = tx.plan as Plan;
  tx.plan = undefined;
  return plan;
}

/**
 * A client waiting on a fetch is answered from a stored copy (a refresh's 304, a stale copy when
 * the origin fails): the driver runs the deliver step for it.
 */
export function resumeToDeliver(tx: Transaction, obj: CachedObject, now: number): void {
  tx.stored = obj;
  tx.storedNow = now;
  tx.storedDrop = undefined;
  tx.runtime.resume(tx, 'deliver');
}

/** A client waiting on a fetch that cannot answer it needs a fetch of its own: the driver runs the fetch step again. */
export function resumeToFetch(tx: Transaction, plan: FetchPlan): void {
  tx.runtime.resume(tx, planFetch(tx, plan));
}
