// Worker side of the per-host logs: lines are formatted in the worker (where the record is) and
// written, as UTF-8, straight into one batch buffer per (log, host); a batch goes to the writer
// when it reaches BATCH_BYTES or FLUSH_MS after its first line, never per request.
//
// A batch travels as one frame of bytes (encodeless: no JSON, no joined string): in the cluster
// over a pipe the primary opens for each worker at fork (lib/log/pipe.ts), where FrameReader
// cuts the byte stream back into batches for the one writer of each file (lib/log/hub.ts).
// Frame: u32le frame length (header included), u8 kind, u16le host length, host (UTF-8), lines.
export type HostLogKind = 'access' | 'origin' | 'dns' | 'monitoring';
/** Kinds of the global logs a worker writes to (host `-`). */
type WorkerGlobalKind = 'error' | 'originError';
type LogKind = HostLogKind | WorkerGlobalKind;

export interface LogBatch {
  kind: LogKind;
  host: string;
  /** Whole lines, each ending with `\n` (UTF-8 bytes when they came from a worker). */
  text: string | Buffer;
}

const KINDS: readonly LogKind[] = ['access', 'origin', 'dns', 'monitoring', 'error', 'originError'];
const BATCH_BYTES = 64 * 1024;
const FLUSH_MS = 100;
const FIXED_HEAD = 7;
/** Free bytes a batch always has for the next line written in place (accessBatch). */
const ROOM = 16 * 1024;

/** An open batch: its frame in `buf`, filled up to `used`; its lines start at `head`. */
export interface Pending { buf: Buffer; used: number; head: number; route: string }

/** Appends a batch's lines to its route's file (lib/log/direct.ts); false: ship them instead. */
type DirectWrite = (route: string, lines: Buffer) => boolean;

export class LogShipper {
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;

  /**
   * `ship` takes each frame whole; the buffer is not touched again by the shipper. `direct`
   * first gets the lines of a host log's batch, to write them itself.
   */
  constructor(private readonly ship: (frame: Buffer) => void, private readonly direct?: DirectWrite) {}

  add(kind: LogKind, host: string, line: string): void {
    const key = kind === 'access' ? host : `${kind}\0${host}`;
    let p = this.pending.get(key);
    // UTF-8 takes at most 3 bytes per UTF-16 unit: a line that may not fit ships the batch first.
    if (p !== undefined && p.used + line.length * 3 > p.buf.length) {
      this.send(key, p);
      p = undefined;
    }
    if (p === undefined) {
      p = open(kind, host, line.length * 3);
      this.pending.set(key, p);
    }
    p.used += p.buf.write(line, p.used);
    this.wrote(key, p);
  }

  /**
   * The open access batch of `host`, with at least ROOM bytes free after `used`, for a formatter
   * that writes its line there in place; it then moves `used` and calls wrote().
   */
  accessBatch(host: string): Pending {
    let p = this.pending.get(host);
    if (p !== undefined && p.buf.length - p.used < ROOM) {
      this.send(host, p);
      p = undefined;
    }
    if (p === undefined) {
      p = open('access', host, ROOM);
      this.pending.set(host, p);
    }
    return p;
  }

  /** A line was written in place into `p` (accessBatch). */
  wrote(host: string, p: Pending): void {
    if (p.used >= BATCH_BYTES) this.send(host, p);
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
    if (this.direct !== undefined && p.route !== '' && this.direct(p.route, p.buf.subarray(p.head, p.used))) return;
    p.buf.writeUInt32LE(p.used, 0);
    try {
      this.ship(p.buf.subarray(0, p.used));
    } catch {
      // The primary is gone (the worker is being torn down): the lines cannot go anywhere.
    }
  }
}

/** A new batch with its frame head written (the length is filled in when it ships). */
function open(kind: LogKind, host: string, room: number): Pending {
  const hostBytes = Buffer.byteLength(host);
  const head = FIXED_HEAD + hostBytes;
  const buf = Buffer.allocUnsafe(Math.max(BATCH_BYTES + ROOM, head + room));
  buf.writeUInt8(KINDS.indexOf(kind), 4);
  buf.writeUInt16LE(hostBytes, 5);
  buf.write(host, FIXED_HEAD);
  // The global logs (error, originError) are the primary's to write.
  const route = kind === 'error' || kind === 'originError' ? '' : `${kind} ${host}`;
  return { buf, used: head, head, route };
}

/**
 * The primary's side: cuts the byte stream of one worker back into batches. A pipe delivers at
 * most 64 KiB per read and a frame is often longer: the pieces of a frame are kept as they came
 * and joined once, when the last one is there (never re-copied per read).
 */
export class FrameReader {
  private parts: Buffer[] = [];
  private held = 0;
  /** Length of the frame being collected, once its first 4 bytes are in. */
  private need = 0;

  constructor(private readonly deliver: (b: LogBatch) => void) {}

  push(chunk: Buffer): void {
    this.parts.push(chunk);
    this.held += chunk.length;
    for (;;) {
      if (this.need === 0) {
        if (this.held < FIXED_HEAD) return;
        this.need = this.headOf().readUInt32LE(0);
        // Not a frame: the stream is corrupt, and nothing held can be trusted.
        if (this.need < FIXED_HEAD) { this.parts = []; this.held = 0; this.need = 0; return; }
      }
      if (this.held < this.need) return;
      const data = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.held);
      const len = this.need;
      this.take(data.subarray(0, len));
      this.parts = data.length > len ? [data.subarray(len)] : [];
      this.held -= len;
      this.need = 0;
    }
  }

  /** The first bytes held, at least FIXED_HEAD of them, in one buffer. */
  private headOf(): Buffer {
    const first = this.parts[0]!;
    if (first.length >= FIXED_HEAD) return first;
    const joined = Buffer.concat(this.parts, this.held);
    this.parts = [joined];
    return joined;
  }

  private take(frame: Buffer): void {
    const hostEnd = FIXED_HEAD + frame.readUInt16LE(5);
    const kind = KINDS[frame[4]!];
    if (kind !== undefined) {
      this.deliver({ kind, host: frame.toString('utf8', FIXED_HEAD, hostEnd), text: frame.subarray(hostEnd) });
    }
  }
}
