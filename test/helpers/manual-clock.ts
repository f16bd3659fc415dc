// A clock the test moves by hand (lib/primary/central/clock.ts): timers fire in time order as
// `advance` passes them, each followed by the promise work it starts.
import type { Clock, Timer } from '../../lib/primary/central/clock.js';

interface Pending { at: number; fn: () => void; cancelled: boolean }

/** Lets promise chains started by a timer run (a few turns of the event loop). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

export class ManualClock implements Clock {
  private readonly timers: Pending[] = [];

  constructor(private t: number) {}

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): Timer {
    const p: Pending = { at: this.t + Math.max(0, ms), fn, cancelled: false };
    this.timers.push(p);
    return { cancel: () => { p.cancelled = true; } };
  }

  /** Moves the time forward by `ms`, firing what falls due on the way. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await settle();
    for (;;) {
      const due = this.timers.filter((p) => !p.cancelled && p.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers.splice(this.timers.indexOf(due), 1);
      this.t = Math.max(this.t, due.at);
      due.fn();
      await settle();
    }
    this.t = end;
  }
}
