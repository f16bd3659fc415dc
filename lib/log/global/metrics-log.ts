// The metrics log (document 3 env.log.metrics): on each fire of its cron `schedule`, the text of
// the /metrics call is written as its own file `metrics_<yyyymmdd>/metrics_<yyyymmddhhmmss>.log`
// under the log's dir (null: env.log.meta.dir), `.log.gz` with `compression`. Each file is
// written as `<name>.tmp` and renamed when whole, so a crash never leaves a partial snapshot.
//
// Capacity is rolling and retention together: with `rolling.time` T, the snapshots of the newest
// `retention` periods of T minutes are kept (1440 and 10: ten days); with `rolling.size` S MB, at
// most S x retention MB of snapshots (the oldest go first); with both, whichever limit is reached
// first; with neither, `retention` days. Emptied day directories are removed.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { nextFire, type Cron } from './cron.js';

const gzipAsync = promisify(gzip);
const DAY_MINUTES = 1440;

export interface MetricsLogOptions {
  dir: string;
  cron: Cron;
  timeMinutes?: number | undefined;
  sizeBytes?: number | undefined;
  retention: number;
  compression: boolean;
  /** The /metrics text at the time of the call. */
  text: () => string;
  now?: () => number;
  onError: (err: Error) => void;
}

const pad = (n: number): string => String(n).padStart(2, '0');

function stampOf(ms: number): { day: string; full: string } {
  const d = new Date(ms);
  const day = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
  return { day, full: `${day}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}` };
}

/** `metrics_yyyymmddhhmmss.log[.gz]` back to ms; undefined for other names. */
function timeOfName(name: string): number | undefined {
  const m = /^metrics_(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})\.log(\.gz)?$/.exec(name);
  return m === null ? undefined : Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
}

export class MetricsLog {
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: MetricsLogOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Arms the timer to the next fire of the schedule (the real clock only). */
  start(): void {
    if (this.closed) return;
    const at = nextFire(this.o.cron, Date.now());
    // setTimeout holds at most ~24.8 days; a longer wait re-arms on the way.
    const wait = Math.min(at - Date.now(), 2 ** 31 - 1);
    this.timer = setTimeout(() => {
      if (Date.now() >= at - 5) void this.snapshot(at);
      this.start();
    }, Math.max(0, wait));
    this.timer.unref();
  }

  /** Writes one snapshot stamped `at` and prunes to the capacity; never rejects. */
  snapshot(at = this.now()): Promise<void> {
    const next = this.chain.then(() => this.write(at)).catch((err: unknown) => this.o.onError(err as Error));
    this.chain = next;
    return next;
  }

  close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    return this.chain;
  }

  private async write(at: number): Promise<void> {
    const { day, full } = stampOf(at);
    const dir = path.join(this.o.dir, `metrics_${day}`);
    await fsp.mkdir(dir, { recursive: true });
    const text = this.o.text();
    const body = this.o.compression ? await gzipAsync(text) : Buffer.from(text);
    const file = path.join(dir, `metrics_${full}.log${this.o.compression ? '.gz' : ''}`);
    const tmp = `${file}.tmp`;
    try {
      await fsp.writeFile(tmp, body);
      await fsp.rename(tmp, file);
    } catch (err) {
      await fsp.rm(tmp, { force: true }).catch(() => undefined);
      throw err;
    }
    await this.prune(at);
  }

  /** Every snapshot, oldest first, with its time and size; leftover .tmp files are removed. */
  private async snapshots(): Promise<Array<{ file: string; at: number; size: number }>> {
    const out: Array<{ file: string; at: number; size: number }> = [];
    const days = (await fsp.readdir(this.o.dir).catch(() => [] as string[])).filter((d) => /^metrics_\d{8}$/.test(d));
    for (const d of days) {
      const dir = path.join(this.o.dir, d);
      for (const f of await fsp.readdir(dir).catch(() => [] as string[])) {
        const file = path.join(dir, f);
        if (f.endsWith('.tmp')) { await fsp.rm(file, { force: true }); continue; }
        const at = timeOfName(f);
        if (at !== undefined) out.push({ file, at, size: (await fsp.stat(file)).size });
      }
    }
    return out.sort((a, b) => a.at - b.at);
  }

  private async prune(now: number): Promise<void> {
    const o = this.o;
    const all = await this.snapshots();
    const minutes = o.timeMinutes ?? (o.sizeBytes === undefined ? DAY_MINUTES : undefined);
    const doomed = new Set<string>();
    if (minutes !== undefined) {
      const period = minutes * 60_000;
      const oldestKept = (Math.floor(now / period) - (o.retention - 1)) * period;
      for (const s of all) if (s.at < oldestKept) doomed.add(s.file);
    }
    if (o.sizeBytes !== undefined) {
      let total = all.reduce((n, s) => n + (doomed.has(s.file) ? 0 : s.size), 0);
      const cap = o.sizeBytes * o.retention;
      // The newest snapshot always stays, even alone over the cap.
      for (const s of all.slice(0, -1)) {
        if (total <= cap) break;
        if (doomed.has(s.file)) continue;
        doomed.add(s.file);
        total -= s.size;
      }
    }
    for (const f of doomed) await fsp.rm(f, { force: true });
    const dirs = new Set([...doomed].map((f) => path.dirname(f)));
    for (const d of dirs) await fsp.rmdir(d).catch(() => undefined);
  }
}
