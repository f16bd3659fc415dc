// Retries with exponential back-off on the injected clock. Feedbacks get a few attempts (the spec
// leaves their failure open; a lost feedback is logged, the next one carries the node's state);
// a backup is retried until it succeeds (document 2), a newer backup replacing a waiting one.
import type { Clock } from './clock.js';
import type { InfoLog } from './http.js';
import type { Sink } from './transport.js';

export interface Retry {
  clock: Clock;
  log: InfoLog;
  /** Attempts in all (Infinity: until it succeeds or `gaveUp()`). */
  attempts: number;
  /** First wait; doubled at each failure up to `maxMs`. */
  baseMs: number;
  maxMs: number;
}

export const FEEDBACK_RETRY = { attempts: 4, baseMs: 1000, maxMs: 8000 };
export const BACKUP_RETRY = { attempts: Infinity, baseMs: 1000, maxMs: 300_000 };

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((r) => clock.after(ms, r));
}

/** Runs `work` until it resolves, `attempts` run out, or `gaveUp()` says to stop; never rejects. */
export async function withRetry(what: string, work: () => Promise<void>, r: Retry, gaveUp: () => boolean = () => false): Promise<boolean> {
  let wait = r.baseMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await work();
      return true;
    } catch (err) {
      const last = attempt >= r.attempts || gaveUp();
      r.log(`central management: ${what} ${last ? 'given up' : 'will be retried'}`, { attempt, error: (err as Error).message, ...(last ? {} : { retryInMs: wait }) });
      if (last) return false;
    }
    await sleep(r.clock, wait);
    if (gaveUp()) return false;
    wait = Math.min(wait * 2, r.maxMs);
  }
}

export function sendWithRetry(sink: Sink, message: Record<string, unknown>, r: Retry): Promise<boolean> {
  return withRetry('feedback', () => sink.send(message), r);
}
