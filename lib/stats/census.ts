// The primary's view of what the disk cache holds per host (FileTotal, WaitingFiles2Delete, the
// Disk group): a thread of its own (workers/index-census-thread.ts) scans the shared index every
// CENSUS_INTERVAL_MS; the documents read the last answer. One question at a time: a slow scan
// (a large index) delays the next one instead of piling them up.
import { Worker } from 'node:worker_threads';
import { threadExecArgv } from '../runtime-args.js';
import type { CensusRow } from '../cache/census.js';

const CENSUS_INTERVAL_MS = 5000;

/** Per host: the index row's figures summed over its disks, and per disk. */
export type HostCensus = Omit<CensusRow, 'vhost' | 'disk'> & { disks: Map<number, { files: number; bytes: number }> };

function threadEntry(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../workers/index-census-thread.${ext}`, import.meta.url);
}

export class Census {
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private asking = false;
  private hosts = new Map<string, HostCensus>();
  /** performance.now() of the last answer; undefined before the first. */
  at: number | undefined;

  constructor(private readonly indexPath: () => string) {}

  start(): void {
    this.ask();
    this.timer = setInterval(() => this.ask(), CENSUS_INTERVAL_MS).unref();
  }

  /** Asks now (tests, and the start), unless a question is still out. */
  ask(): void {
    if (this.asking) return;
    const w = this.thread();
    this.asking = true;
    w.postMessage({ now: Date.now() });
  }

  host(name: string): HostCensus | undefined {
    return this.hosts.get(name);
  }

  private thread(): Worker {
    if (this.worker !== undefined) return this.worker;
    const w = new Worker(threadEntry(), {
      workerData: this.indexPath(),
      execArgv: threadExecArgv(),
    });
    w.unref();
    w.on('message', (m: { rows?: CensusRow[]; error?: string }) => {
      this.asking = false;
      if (m.rows !== undefined) this.take(m.rows);
    });
    // A thread that died is started again at the next question.
    const gone = (): void => { this.asking = false; if (this.worker === w) this.worker = undefined; };
    w.on('error', gone);
    w.on('exit', gone);
    this.worker = w;
    return w;
  }

  private take(rows: CensusRow[]): void {
    const hosts = new Map<string, HostCensus>();
    for (const r of rows) {
      let h = hosts.get(r.vhost);
      if (h === undefined) hosts.set(r.vhost, (h = { files: 0, bytes: 0, waitingDelete: 0, purged: 0, expired: 0, hardPurged: 0, disks: new Map() }));
      h.files += r.files;
      h.bytes += r.bytes;
      h.waitingDelete += r.waitingDelete;
      h.purged += r.purged;
      h.expired += r.expired;
      h.hardPurged += r.hardPurged;
      h.disks.set(r.disk, { files: r.files, bytes: r.bytes });
    }
    this.hosts = hosts;
    this.at = performance.now();
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.worker?.terminate();
  }
}
