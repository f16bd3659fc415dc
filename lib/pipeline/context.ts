// What the cache stages of one worker share: the store, the fetches in flight, limits.
import type { TieredStore } from '../cache/tiered-store.js';
import type { InflightTable } from './inflight.js';

export interface CacheContext {
  store: TieredStore;
  inflight: InflightTable;
  /** Bytes of an object in flight kept for clients that join late. */
  maxReplayBytes: number;
}
