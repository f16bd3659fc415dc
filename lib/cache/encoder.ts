// The compression queue of one host in one worker (issue 28). zlib's asynchronous calls run in
// libuv's thread pool, so the event loop only hands buffers over; the pool is shared with file
// reads, hence the bound on compressions running at once, and a bound on those waiting: a job
// that finds the queue full is refused and its client gets the identity answer at once. Under
// load answers degrade to identity, they never wait behind a growing queue.
import { brotliCompress, constants, gzip, zstdCompress } from 'node:zlib';
import type { Coding } from './policy/encoding.js';

export interface EncoderLimits {
  concurrency: number;
  maxQueued: number;
  level: Record<Coding, number>;
}

type Done = (err: Error | null, out: Buffer) => void;

/** One compression with zlib's async API at the level of the setting. */
function compress(coding: Coding, body: Buffer, level: number, done: Done): void {
  if (coding === 'gzip') { gzip(body, { level }, done); return; }
  if (coding === 'br') {
    brotliCompress(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: level,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }, done);
    return;
  }
  zstdCompress(body, { params: { [constants.ZSTD_c_compressionLevel]: level, [constants.ZSTD_c_checksumFlag]: 1 } }, done);
}

interface Job { result: Promise<unknown>; run: () => void }

export class Encoder {
  private running = 0;
  private readonly waiting: Job[] = [];
  /** Jobs queued or running by their key: one compression per object and coding however many ask. */
  private readonly jobs = new Map<string, Job>();

  constructor(private readonly limits: EncoderLimits) {}

  /** Compressions running and waiting. */
  get load(): { running: number; queued: number } {
    return { running: this.running, queued: this.waiting.length };
  }

  /**
   * `finish` of the encoded body of `key`, made once: a job under way for the same key is joined
   * (the caller knows one key means one finish). undefined when the queue is full: the caller
   * serves identity. `body` is read only when the job runs.
   */
  encode<T>(key: string, coding: Coding, body: () => Promise<Buffer>, finish: (out: Buffer) => T): Promise<T> | undefined {
    const known = this.jobs.get(key);
    if (known !== undefined) return known.result as Promise<T>;
    if (this.running >= this.limits.concurrency && this.waiting.length >= this.limits.maxQueued) return undefined;
    let run!: () => void;
    const result = new Promise<T>((resolve, reject) => {
      run = () => {
        this.running++;
        const settle = (err: Error | null, out?: Buffer): void => {
          this.running--;
          this.jobs.delete(key);
          try {
            if (err === null) resolve(finish(out!)); else reject(err);
          } catch (e) {
            reject(e as Error);
          }
          this.next();
        };
        body().then((b) => compress(coding, b, this.limits.level[coding], settle), (err: Error) => settle(err));
      };
    });
    const job: Job = { result, run };
    this.jobs.set(key, job);
    if (this.running < this.limits.concurrency) job.run();
    else this.waiting.push(job);
    return result;
  }

  private next(): void {
    while (this.running < this.limits.concurrency && this.waiting.length > 0) this.waiting.shift()!.run();
  }
}
