// Follows the service `State` the license decides (`Healthy` / `Inactive`) as time passes: a
// license expires without any reload, so the state is re-checked every minute and at the
// license's NotAfter, and each transition is reported once (the primary writes it to the info
// log). A license applied through the API is checked at once. It reports through the logs, so it
// lives with the primary that runs it: lib/license stays below the logs, whose repositories read
// its secret box.
import { parseLicenseTime } from '../license/license.js';
import { systemLog } from '../log/system-log.js';
import { reportError } from '../log/global/report.js';
import type { LicenseService, LicenseState } from '../license/service.js';

export interface StateChange {
  state: LicenseState;
  previous: LicenseState | undefined;
  status: string;
  /** Why the license is not Available; undefined when Healthy. */
  reason: string | undefined;
}

const PERIOD_MS = 60_000;

export class LicenseWatch {
  private last: LicenseState | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;

  constructor(private readonly license: LicenseService, private readonly report: (c: StateChange) => void,
    private readonly now: () => number = Date.now) {
    this.unsubscribe = license.onChange(() => this.check());
  }

  /** Reports the state at start (previous undefined) and keeps following it. */
  start(): void {
    this.check();
  }

  /** Re-reads the state; reports a transition; schedules the next check. */
  check(): LicenseState {
    const state = this.license.state();
    if (state !== this.last) {
      const previous = this.last;
      this.last = state;
      this.report({ state, previous, status: this.license.current().Status, reason: this.license.problem() });
    }
    this.schedule();
    return state;
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    let wait = PERIOD_MS;
    const notAfter = parseLicenseTime(this.license.current().Validity.NotAfter);
    // Expiry is seen at its second, not up to a minute later.
    if (notAfter !== undefined && notAfter > this.now()) wait = Math.min(wait, notAfter - this.now() + 5);
    this.timer = setTimeout(() => this.check(), wait);
    this.timer.unref();
  }

  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.unsubscribe();
  }
}

/** The service State the license decides, in the info log (and the system log) at each change. */
export async function logStateChange(c: StateChange, info: (message: string, fields: Record<string, unknown>) => Promise<void>): Promise<void> {
  const fields = { State: c.state, Status: c.status, ...(c.reason === undefined ? {} : { reason: c.reason }) };
  const message = c.previous === undefined ? `license state at start: ${c.state}` : `license state changed: ${c.previous} -> ${c.state}`;
  if (c.state === 'Inactive') {
    systemLog.warn(fields, message);
    reportError({ code: '1003', detail: `${message}${c.reason === undefined ? '' : ` (${c.reason})`}` });
  } else systemLog.info(fields, message);
  await info(message, fields).catch(() => undefined);
}
