// One log file that rolls (document 3 "Rolling, retention, compression"): by clock period
// (`rolling.time` minutes: a file per multiple of the period on the UTC clock), by size
// (`rolling.size`: a new file once the next batch would cross it, its name with seconds), or
// both (the first reached). A rolled file is gzipped off the event loop (zlib runs in the
// thread pool) when `compression` is on, and at most `retention` files of the log are kept.
//
// The primary owns each file (lib/log/hub.ts): it opens it at its first line, writes its header,
// rolls and gzips it. Workers append their batches to the current file of a log that does not
// roll by size themselves (lib/log/direct.ts), whole batches with O_APPEND, and are moved to the
// next file before the previous one is gzipped.
//
// Crash safety: a gzip is written to `<name>.gz.part` and renamed when complete, so a crash
// never leaves a half-written `.gz` counted as a rolled log; at open, `.part` files are removed
// and rolled `.log` files that should have been compressed are compressed again.
import { once } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

export interface RollOptions {
  dir: string;
  /** File name prefix: `access` gives `access_<yyyymmdd>_<hhmm>[ss].log`. */
  base: string;
  /** Minutes (1..1440); undefined: no rolling by time. */
  timeMinutes?: number;
  /** Bytes; undefined: no rolling by size. */
  sizeBytes?: number;
  /** Maximum number of files of this log kept (the current one included). */
  retention: number;
  compression: boolean;
  /** Written first in every new file (the W3C `#Fields:` lines). */
  header?: string;
  /** The clock (ms since the epoch); injected by tests. */
  now?: () => number;
  /** A write, roll or compression failed (the caller rate-limits the report). */
  onError?: (err: Error) => void;
  /**
   * A new current file is open (at start and at each roll): the workers that append to it
   * themselves (lib/log/direct.ts) move to it. A rolled file is gzipped once this resolves.
   */
  onSwitch?: (file: string) => Promise<void>;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** `yyyymmdd` and `hhmm` / `hhmmss` of a UTC time. */
function fileStamp(ms: number, seconds: boolean): string {
  const d = new Date(ms);
  const day = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
  const hm = `${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}`;
  return `${day}_${hm}${seconds ? pad(d.getUTCSeconds()) : ''}`;
}

/** Start of the clock period `ms` falls in (1440: 00:00 UTC; 10: :00, :10 ...). */
function periodStart(ms: number, minutes: number): number {
  const p = minutes * 60_000;
  return Math.floor(ms / p) * p;
}

export class RollingFile {
  private readonly now: () => number;
  private stream: fs.WriteStream | undefined;
  private file: string | undefined;
  /**
   * False while a new file is being opened and its header written: `current` does not name it
   * yet, so no worker told of it (another log's switch announces every route's file) can append
   * a line above the header.
   */
  private ready = false;
  private size = 0;
  /** Period start of the current file (time rolling), else -1. */
  private period = -1;
  /** Work that must stay ordered: opening, rolling, compressing, pruning. */
  private chain: Promise<void> = Promise.resolve();
  private pending: Array<string | Buffer> = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /**
   * True for a file name retention must not delete yet (a rolled file a backup repository has
   * not received): such files are kept beyond `retention` until shipped.
   */
  hold: ((name: string) => boolean) | undefined;

  constructor(readonly opts: RollOptions) {
    this.now = opts.now ?? Date.now;
    this.armTimer();
  }

  /** The file being written (undefined until the first write opened it and wrote its header). */
  get current(): string | undefined {
    return this.ready ? this.file : undefined;
  }

  /** Appends whole lines (the caller ends each with `\n`); written in order, asynchronously. */
  write(text: string | Buffer): void {
    if (this.closed || text.length === 0) return;
    this.pending.push(text);
    this.pendingBytes += typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    if (this.pending.length === 1) this.enqueue(() => this.drain());
  }

  /** Rolls now if the clock period changed (the timer calls it; tests with their own clock too). */
  tick(): Promise<void> {
    return this.enqueue(async () => {
      if (this.file !== undefined && this.opts.timeMinutes !== undefined &&
        periodStart(this.now(), this.opts.timeMinutes) !== this.period) await this.roll();
    });
  }

  /** Resolves when everything written so far is in the file (and rolled files compressed). */
  flush(): Promise<void> {
    return this.enqueue(async () => {
      const s = this.stream;
      if (s !== undefined && s.writableLength > 0) await new Promise<void>((r) => s.write('', () => r()));
    });
  }

  /**
   * Names of the finished (rolled) files of this log, oldest first, in step with rolling and
   * compression: never the current file, never a `.part`.
   */
  rolled(): Promise<string[]> {
    let names: string[] = [];
    return this.enqueue(async () => {
      const current = this.file === undefined ? '' : path.basename(this.file);
      names = (await this.ownFiles()).filter((f) => f !== current && (f.endsWith('.log') || f.endsWith('.log.gz'))).sort();
    }).then(() => names);
  }

  /** Applies retention now (a held file was shipped). */
  retain(): Promise<void> {
    return this.enqueue(() => this.prune());
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.flush();
    this.closed = true;
    await this.enqueue(() => this.closeStream());
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn).catch((err: unknown) => this.opts.onError?.(err as Error));
    this.chain = next;
    return next;
  }

  private async drain(): Promise<void> {
    const text = joined(this.pending);
    const bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    const o = this.opts;
    if (this.file === undefined) await this.open();
    else if (o.timeMinutes !== undefined && periodStart(this.now(), o.timeMinutes) !== this.period) await this.roll();
    if (o.sizeBytes !== undefined && this.size > 0 && this.size + bytes > o.sizeBytes) await this.roll();
    this.size += bytes;
    await this.append(text);
  }

  private append(text: string | Buffer): Promise<void> {
    const s = this.stream!;
    return new Promise((resolve, reject) => {
      // The callback reports this write's error; later writes find the stream destroyed and the
      // next batch reopens it (a full disk may have room again).
      s.write(text, (err) => {
        if (err) { this.stream = undefined; this.file = undefined; reject(err); } else resolve();
      });
    });
  }

  /** The name a new file gets now. */
  private nameAt(ms: number): string {
    const o = this.opts;
    if (o.timeMinutes === undefined && o.sizeBytes === undefined) return `${o.base}.log`;
    const at = o.timeMinutes !== undefined && o.sizeBytes === undefined ? periodStart(ms, o.timeMinutes) : ms;
    return `${o.base}_${fileStamp(at, o.sizeBytes !== undefined)}.log`;
  }

  /** Opens the current file: at start, the newest `.log` of this log is continued when it is still current. */
  private async open(): Promise<void> {
    const o = this.opts;
    await fsp.mkdir(o.dir, { recursive: true });
    const now = this.now();
    this.period = o.timeMinutes === undefined ? -1 : periodStart(now, o.timeMinutes);
    const files = await this.ownFiles();
    for (const f of files) if (f.endsWith('.part')) await fsp.rm(path.join(o.dir, f), { force: true });
    const logs = files.filter((f) => f.endsWith('.log')).sort();
    let name = this.nameAt(now);
    const newest = logs.at(-1);
    if (newest !== undefined && newest !== name && o.sizeBytes !== undefined) {
      // Size names carry the second the file was opened: continue it if it is in this period and not full.
      const st = await fsp.stat(path.join(o.dir, newest));
      const stampOf = parseStamp(newest.slice(o.base.length + 1, -4));
      const samePeriod = o.timeMinutes === undefined || (stampOf !== undefined && periodStart(stampOf, o.timeMinutes) === this.period);
      if (samePeriod && st.size < o.sizeBytes) name = newest;
    }
    await this.openFile(name);
    await o.onSwitch?.(this.file!);
    // Rolled files left uncompressed by a crash or a stop in the middle of a roll.
    if (o.compression) for (const f of logs) if (f !== name) await this.compress(path.join(o.dir, f));
    await this.prune();
  }

  private async openFile(name: string): Promise<void> {
    const o = this.opts;
    let file = path.join(o.dir, name);
    // Two size rolls within one second: the second file gets a suffix rather than reopen the first.
    for (let i = 1; this.size === 0 && name !== `${o.base}.log` && this.file !== undefined && (await exists(file) || await exists(`${file}.gz`)); i++) {
      file = path.join(o.dir, `${name.slice(0, -4)}-${i}.log`);
    }
    const size = await fsp.stat(file).then((s) => s.size, () => 0);
    const stream = fs.createWriteStream(file, { flags: 'a' });
    stream.on('error', (err) => { if (this.stream === stream) { this.stream = undefined; this.file = undefined; } o.onError?.(err); });
    this.stream = stream;
    this.ready = false;
    this.file = file;
    this.size = size;
    // The file exists once this resolves: retention counts it even before its first line.
    await once(stream, 'open');
    if (size === 0 && o.header !== undefined) {
      this.size += Buffer.byteLength(o.header);
      await this.append(o.header);
    }
    this.ready = true;
  }

  private async roll(): Promise<void> {
    const previous = this.file;
    await this.closeStream();
    const now = this.now();
    if (this.opts.timeMinutes !== undefined) this.period = periodStart(now, this.opts.timeMinutes);
    this.size = 0;
    this.file = previous; // openFile avoids reusing a name rolled within the same second
    await this.openFile(this.nameAt(now));
    await this.opts.onSwitch?.(this.file!);
    if (previous !== undefined && this.opts.compression && previous !== this.file) await this.compress(previous);
    await this.prune();
  }

  private async closeStream(): Promise<void> {
    const s = this.stream;
    this.stream = undefined;
    if (s !== undefined && !s.destroyed) await new Promise<void>((r) => s.end(() => r()));
  }

  /** `x.log` -> `x.log.gz` through `x.log.gz.part`; the `.log` goes only once the gzip is whole. */
  private async compress(file: string): Promise<void> {
    const part = `${file}.gz.part`;
    await pipeline(fs.createReadStream(file), createGzip(), fs.createWriteStream(part));
    await fsp.rename(part, `${file}.gz`);
    await fsp.rm(file, { force: true });
  }

  /** Keeps the newest `retention` files of this log (names sort by time), and every held one. */
  private async prune(): Promise<void> {
    const files = (await this.ownFiles()).filter((f) => f.endsWith('.log') || f.endsWith('.log.gz')).sort();
    const current = this.file === undefined ? '' : path.basename(this.file);
    const hold = this.hold;
    const old = files.filter((f) => f !== current && (hold === undefined || !hold(f)));
    const extra = files.length - this.opts.retention;
    for (let i = 0; i < extra && i < old.length; i++) await fsp.rm(path.join(this.opts.dir, old[i]!), { force: true });
  }

  private async ownFiles(): Promise<string[]> {
    const prefix = `${this.opts.base}_`;
    const names = await fsp.readdir(this.opts.dir).catch(() => [] as string[]);
    return names.filter((f) => f.startsWith(prefix) || f === `${this.opts.base}.log`);
  }

  /** Rolls at the next clock boundary even when no line comes (so the gzip happens on time). */
  private armTimer(): void {
    const minutes = this.opts.timeMinutes;
    if (minutes === undefined || this.opts.now !== undefined) return;
    const now = Date.now();
    const wait = periodStart(now, minutes) + minutes * 60_000 - now + 50;
    this.timer = setTimeout(() => { void this.tick(); this.armTimer(); }, wait);
    this.timer.unref();
  }
}

/** `yyyymmdd_hhmm[ss]` back to ms (UTC); undefined when the name is not one of ours. */
function parseStamp(s: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})?/.exec(s);
  if (m === null) return undefined;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0));
}

function exists(f: string): Promise<boolean> {
  return fsp.access(f).then(() => true, () => false);
}

/** The pending writes as one: a single batch as it is, strings (the primary's own) or bytes (a worker's). */
function joined(parts: Array<string | Buffer>): string | Buffer {
  if (parts.length === 1) return parts[0]!;
  if (parts.every((p) => typeof p === 'string')) return parts.join('');
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}
