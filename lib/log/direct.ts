// Worker side of the per-host log files: a full batch of lines (lib/log/ship.ts) is appended by
// the worker itself to the file the primary opened for it, as nginx's workers append to theirs.
// Shipping every batch to the primary cost each line about 1.5 µs of a core: the pipe, and the
// primary woken to read it and write it again (issue 11: hit-1k with the access log keeps >= 0.85).
//
// The primary still owns each file's life (lib/log/roll.ts: opening with its header, rolling,
// gzip, retention) and announces the current file of every (kind, host) route; a worker appends
// with O_APPEND, one whole batch per write(2), so the lines of several workers never interleave
// within a line. After an announcement the worker answers once it stopped writing the previous
// files, and only then does the primary gzip a rolled file. A route with no announced file goes
// by the pipe, where the primary writes it and reports failures: a file not opened yet (the
// primary opens a file at its first line), one that rolls by size (only the one writer can
// keep a file within its size), one whose directory is unusable.
import fs from 'node:fs';

/** The primary's announcement: route (`kind host`) -> the path of its current file. */
export type LogFiles = Record<string, string>;

/** Messages of the direct writer to the primary. */
export type DirectReport =
  | { type: 'log-files-switched'; generation: number }
  | { type: 'log-file-error'; file: string; message: string };

/** A worker reports a failing file once per this, the primary once a minute per file. */
const REPORT_EVERY_MS = 60_000;

class FileSink {
  private fd: number | undefined;
  private opening = false;
  private readonly queue: Buffer[] = [];
  private writing = false;
  private retired = false;
  private lastReport = -Infinity;
  /** Called each time the sink has nothing queued nor in flight. */
  idle: (() => void) | undefined;

  constructor(readonly path: string, private readonly report: (m: DirectReport) => void) {}

  get busy(): boolean {
    return this.writing || this.opening || this.queue.length > 0;
  }

  append(bytes: Buffer): void {
    this.queue.push(bytes);
    this.next();
  }

  /** Writes what is queued, then closes the file. */
  retire(): void {
    this.retired = true;
    this.next();
  }

  private next(): void {
    if (this.writing || this.opening) return;
    if (this.fd === undefined && this.queue.length > 0) { this.open(); return; }
    const bytes = this.queue.shift();
    if (bytes === undefined) {
      if (this.retired && this.fd !== undefined) { fs.close(this.fd, () => undefined); this.fd = undefined; }
      this.idle?.();
      return;
    }
    this.writing = true;
    fs.write(this.fd!, bytes, 0, bytes.length, null, (err) => {
      this.writing = false;
      if (err !== null) this.failed(err);
      this.next();
    });
  }

  /** The primary created the file (with its header): never created here, so `a` without `w`. */
  private open(): void {
    this.opening = true;
    fs.open(this.path, fs.constants.O_WRONLY | fs.constants.O_APPEND, (err, fd) => {
      this.opening = false;
      if (err !== null) {
        // The lines of this batch are lost, as the primary's own writes lose them on a failing disk.
        this.queue.length = 0;
        this.failed(err);
      } else {
        this.fd = fd;
      }
      this.next();
    });
  }

  private failed(err: Error): void {
    const now = Date.now();
    if (now - this.lastReport < REPORT_EVERY_MS) return;
    this.lastReport = now;
    this.report({ type: 'log-file-error', file: this.path, message: err.message });
  }
}

export class DirectFiles {
  /** Route (`kind host`) -> its sink. */
  private sinks = new Map<string, FileSink>();
  /** Sinks of earlier announcements still writing; the switch is answered when none is left. */
  private readonly retiring = new Set<FileSink>();
  private switching: number | undefined;
  private settledWaiters: Array<() => void> = [];

  constructor(private readonly report: (m: DirectReport) => void) {}

  /** The primary's announcement: the current file of every route it writes. */
  update(files: LogFiles, generation: number): void {
    const next = new Map<string, FileSink>();
    for (const [route, path] of Object.entries(files)) {
      const had = this.sinks.get(route);
      next.set(route, had !== undefined && had.path === path ? had : this.sink(path));
    }
    for (const [route, s] of this.sinks) {
      if (next.get(route) === s) continue;
      this.retiring.add(s);
      s.retire();
    }
    this.sinks = next;
    this.switching = generation;
    this.answerWhenSwitched();
  }

  /** Appends `bytes` to the file of `route`; false when there is none (the caller ships them). */
  readonly write = (route: string, bytes: Buffer): boolean => {
    const s = this.sinks.get(route);
    if (s === undefined) return false;
    s.append(bytes);
    return true;
  };

  /** Resolves once every batch handed over is written (a draining worker). */
  settled(): Promise<void> {
    if (!this.busy()) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  private sink(path: string): FileSink {
    const s = new FileSink(path, this.report);
    s.idle = () => this.sinkIdle(s);
    return s;
  }

  private sinkIdle(s: FileSink): void {
    if (this.retiring.delete(s)) this.answerWhenSwitched();
    if (this.settledWaiters.length > 0 && !this.busy()) {
      const waiters = this.settledWaiters;
      this.settledWaiters = [];
      for (const w of waiters) w();
    }
  }

  private answerWhenSwitched(): void {
    if (this.switching === undefined || this.retiring.size > 0) return;
    const generation = this.switching;
    this.switching = undefined;
    this.report({ type: 'log-files-switched', generation });
  }

  private busy(): boolean {
    for (const s of this.sinks.values()) if (s.busy) return true;
    for (const s of this.retiring) if (s.busy) return true;
    return false;
  }
}
