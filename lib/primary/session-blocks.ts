// The node's session-id counter (document 3 `session-id`), owned by the primary and handed to
// the workers in blocks (lib/pipeline/parts/session-ids.ts takes them).
//
// Ids must not repeat across primary restarts, and nothing is stored: the counter starts at the
// wall clock in microseconds, Date.now() * 1000. A restarted primary starts above every id its
// predecessor gave out as long as that one gave out fewer than 1000 ids per millisecond of its
// life (counted from its start, blocks counted when handed out). The tight case is a crash just
// after start: every worker holds one block then, so workers * SESSION_BLOCK must stay under
// 1000 * (the time from one primary's start to the next's), e.g. 64 workers -> 1 s. Sustained,
// the bound is a million requests a second per node. The counter stays under 2^53, so a JS
// number holds every id exactly: Date.now() * 1000 reaches 2^53 in the year 2255.

/**
 * Ids per block: small enough for the restart bound above, large enough that a worker at 100,000
 * requests a second asks about six times a second (asking ahead, so no request waits).
 */
export const SESSION_BLOCK = 16384;

export class SessionBlocks {
  private next: number;

  constructor(now = Date.now()) {
    this.next = now * 1000;
  }

  take(count = SESSION_BLOCK): { start: number; count: number } {
    const start = this.next;
    this.next += count;
    return { start, count };
  }
}
