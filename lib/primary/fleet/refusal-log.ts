// The info-log lines of refused discovery datagrams, bounded for the whole node rather than per
// source: source addresses cost a spoofing sender nothing, so a bound per source let 3,000 of
// them write 2,922 lines in under a second. At most REFUSAL_LINES lines per REFUSAL_WINDOW_MS;
// the refusals past them are counted, and when the window ends one line gives their count and
// the last of them. A flood of any size and origin writes at most REFUSAL_LINES + 1 lines a window.
export const REFUSAL_LINES = 10;
export const REFUSAL_WINDOW_MS = 60_000;

type Info = (message: string, fields: Record<string, unknown>) => void;

export class RefusalLog {
  private windowStart = -Infinity;
  private lines = 0;
  private unlogged = 0;
  private last: { from: string; reason: string } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly info: Info, private readonly now: () => number) {}

  refused(from: string, reason: string): void {
    const now = this.now();
    if (now - this.windowStart >= REFUSAL_WINDOW_MS) {
      this.flush();
      this.windowStart = now;
      this.lines = 0;
    }
    if (this.lines < REFUSAL_LINES) {
      this.lines++;
      this.info('discovery advertisement refused', { from, reason });
      return;
    }
    this.unlogged++;
    this.last = { from, reason };
    // The count is written when the window ends, even if nothing else is refused by then.
    this.timer ??= setTimeout(() => this.flush(), Math.max(0, this.windowStart + REFUSAL_WINDOW_MS - now)).unref();
  }

  /** Writes the count of the window's refusals not logged, if there are any. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.unlogged === 0) return;
    this.info('discovery advertisements refused and not logged', {
      count: this.unlogged, windowSeconds: REFUSAL_WINDOW_MS / 1000, lastFrom: this.last?.from, lastReason: this.last?.reason,
    });
    this.unlogged = 0;
  }
}
