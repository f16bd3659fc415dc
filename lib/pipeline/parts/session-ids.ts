// Session ids (document 3 `session-id`, `%e`): unsigned, unique per node. The primary owns one
// counter for the node and hands each worker blocks of it (lib/primary/session-blocks.ts); a
// worker asks for the next block when half of the current one is used, so a request never waits
// for IPC and IPC never happens per request.
//
// Until a block arrives (a worker asks before it listens, so in practice only in-process tests
// and a primary that does not answer) ids come from a local fallback range, [2^49, 2^50): the
// primary's blocks start at Date.now() * 1000, which has been above 2^50 since 2005, so the two
// never meet. Inside the fallback range each process takes the span of its pid (pid mod 2^22,
// 2^27 ids each): distinct among the live workers of a node. Fallback ids are not promised to
// stay unique across restarts (pids come back); they are recognisable by being below 2^50.

const FALLBACK_BASE = 2 ** 49;
const FALLBACK_SPAN = 2 ** 27;
const PID_SLOTS = 2 ** 22;

export class SessionIds {
  private next = 0;
  private end = 0;
  /** When `next` reaches this, the following block is asked for. */
  private askAt = -1;
  private spareStart = 0;
  private spareEnd = 0;
  private asking = false;
  private readonly fallbackBase: number;
  private fallbackNext = 0;

  /** `ask` sends one request for a block; its answer comes back through addBlock. */
  constructor(private readonly ask?: () => void, pid = process.pid) {
    this.fallbackBase = FALLBACK_BASE + (pid % PID_SLOTS) * FALLBACK_SPAN;
    this.askAhead();
  }

  take(): number {
    if (this.next < this.end) {
      if (this.next === this.askAt) this.askAhead();
      return this.next++;
    }
    if (this.spareEnd > this.spareStart) {
      this.use(this.spareStart, this.spareEnd);
      this.spareStart = this.spareEnd = 0;
      return this.take();
    }
    this.askAhead();
    const id = this.fallbackBase + this.fallbackNext;
    this.fallbackNext = (this.fallbackNext + 1) % FALLBACK_SPAN;
    return id;
  }

  /** A block [start, start + count) from the primary. */
  addBlock(start: number, count: number): void {
    this.asking = false;
    if (this.next >= this.end) this.use(start, start + count);
    else { this.spareStart = start; this.spareEnd = start + count; }
  }

  /** True while ids come from the primary's blocks (not the fallback). */
  get fromPrimary(): boolean {
    return this.next < this.end || this.spareEnd > this.spareStart;
  }

  private use(start: number, end: number): void {
    this.next = start;
    this.end = end;
    this.askAt = start + Math.floor((end - start) / 2);
  }

  private askAhead(): void {
    if (this.asking || this.ask === undefined || this.spareEnd > this.spareStart) return;
    this.asking = true;
    this.ask();
  }
}
