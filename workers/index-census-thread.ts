// Entry point of the primary's index census thread (started by lib/stats/census.ts): answers
// each `{now}` with the per-host, per-disk figures of the cache index (lib/cache/census.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { IndexCensus } from '../lib/cache/census.js';

const port = parentPort!;
let census: IndexCensus | undefined;
port.on('message', (m: { now: number }) => {
  try {
    // The index appears when the first worker opens its cache: until then, nothing to count.
    census ??= new IndexCensus(workerData as string);
    port.postMessage({ rows: census.take(m.now) });
  } catch (err) {
    census?.close();
    census = undefined;
    port.postMessage({ error: (err as Error).message });
  }
});
