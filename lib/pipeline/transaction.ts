// One client transaction as it moves through the pipeline; the finish stage reads it for the
// access log and the statistics.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HostRuntime } from './host-runtime.js';
import type { CacheResult } from '../cache/policy/results.js';

export interface Transaction {
  req: IncomingMessage;
  res: ServerResponse;
  host: HostRuntime;
  /** Path plus query as the origin and the cache see it. */
  url: string;
  /** Arrived from a sibling worker (hash balance): already counted and X-Forwarded-For set there. */
  fromSibling: boolean;
  startedAt: number;
  status: number;
  cacheResult: CacheResult | undefined;
  aborted: boolean;
}
