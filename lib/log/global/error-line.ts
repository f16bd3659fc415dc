// The error-log line (document 3: `date time error vhost url x-ctx-id message`), formatted where
// the event happens (a worker or the primary) and kept or dropped by env.log.error.filter there,
// so a dropped line never crosses IPC. The message starts with the level in brackets, then the
// code's fixed text, then the event's detail.
import type { Setting } from '../../setting/types.js';
import { ERRORS, LEVELS, type ErrorEvent } from './error-codes.js';
import { ErrorFilter } from './error-filter.js';

/** `yyyy-mm-dd` and `hh:mm:ss` in UTC, the time of every global log line and history entry. */
export function stamp(d: Date = new Date()): { date: string; time: string } {
  const iso = d.toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 19) };
}

/** A field of a space-separated line: `-` when absent, inner spaces as `+`. */
function field(v: string | undefined): string {
  return v === undefined || v === '' ? '-' : v.replace(/\s/g, '+');
}

export class ErrorLines {
  private readonly filter: ErrorFilter;

  constructor(error: Setting['env']['log']['error']) {
    this.filter = new ErrorFilter(error.filter);
  }

  /** The line of an event, or undefined when the filter drops it. */
  line(e: ErrorEvent, at: number): string | undefined {
    const code = ERRORS[e.code];
    if (code === undefined || !this.filter.wants(code.level)) return undefined;
    const { date, time } = stamp(new Date(at));
    const detail = e.detail === undefined ? '' : `: ${e.detail.replace(/\s+/g, ' ')}`;
    const line = `${date} ${time} ${e.code} ${field(e.vhost)} ${field(e.url)} ${field(e.ctxId)} [${LEVELS[code.level]}] ${code.text}${detail}`;
    return this.filter.keeps(line) ? `${line}\n` : undefined;
  }
}
