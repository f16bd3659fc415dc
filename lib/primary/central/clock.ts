// The time source of the central-management schedules (feed polling, heartbeat, node list), so a
// test drives the cadence with a manual clock instead of waiting on the wall clock.
import { nextFire, parseCron } from '../../log/cron.js';

export interface Timer { cancel(): void }

export interface Clock {
  now(): number;
  /** Calls `fn` after `ms` (never keeps the process alive). */
  after(ms: number, fn: () => void): Timer;
}

export const realClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    // setTimeout holds at most ~24.8 days; a longer wait is cut and re-armed by the caller.
    const t = setTimeout(fn, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/**
 * Runs `job` at every fire of a six-field cron schedule (lib/log/cron.ts). A run that lasts past
 * the next fire is not overlapped: the schedule is re-armed from when the run ended, so a slow
 * central server delays its own polls and nothing else.
 */
export class CronRunner {
  private timer: Timer | undefined;
  private stopped = false;
  private readonly cron;

  constructor(schedule: string, private readonly clock: Clock, private readonly job: () => Promise<void>) {
    this.cron = parseCron(schedule);
  }

  start(): void {
    if (this.stopped) return;
    const at = nextFire(this.cron, this.clock.now());
    this.timer = this.clock.after(at - this.clock.now(), () => {
      // A timer cut short (a wait longer than setTimeout holds) only re-arms.
      if (this.clock.now() < at - 5) { this.start(); return; }
      void this.job().catch(() => undefined).finally(() => this.start());
    });
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }
}
