// Worker side of the per-host logs: lines are formatted in the worker (where the record is) and
// collected here per (log, host); a batch goes to the writer when it reaches BATCH_BYTES or
// FLUSH_MS after its first line, never per request. In the cluster the writer is the primary
// (lib/log/hub.ts, one writer per file); in-process it is a hub of the same process.
export type HostLogKind = 'access' | 'origin' | 'dns' | 'monitoring';
/** Kinds of the global logs a worker writes to (host `-`). */
type WorkerGlobalKind = 'error' | 'originError';

export interface LogBatch {
  kind: HostLogKind | WorkerGlobalKind;
  host: string;
  text: string;
}

const BATCH_BYTES = 64 * 1024;
const FLUSH_MS = 100;

interface Pending { kind: LogBatch['kind']; host: string; parts: string[]; chars: number }

export class LogShipper {
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ship: (b: LogBatch) => void) {}

  add(kind: LogBatch['kind'], host: string, line: string): void {
    const key = kind === 'access' ? host : `${kind}\0${host}`;
    let p = this.pending.get(key);
    if (p === undefined) {
      p = { kind, host, parts: [], chars: 0 };
      this.pending.set(key, p);
    }
    p.parts.push(line);
    p.chars += line.length;
    if (p.chars >= BATCH_BYTES) this.send(key, p);
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Sends every batch now (the timer, and a worker that drains). */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const [key, p] of this.pending) this.send(key, p);
  }

  private send(key: string, p: Pending): void {
    this.pending.delete(key);
    if (p.parts.length === 0) return;
    try {
      this.ship({ kind: p.kind, host: p.host, text: p.parts.join('') });
    } catch {
      // The primary is gone (the worker is being torn down): the lines cannot go anywhere.
    }
  }
}
