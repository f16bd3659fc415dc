// The unit an upload carries: the rolled files of one log not yet shipped to a repository, in
// order, as one body. Built by streaming (a `.gz` file is gunzipped on the way, the body gzipped
// when the repository compresses) into a spool file beside the log, so that the upload streams
// from disk with a known length and SHA-256 and a retry sends the same bytes.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

export interface Spooled {
  file: string;
  bytes: number;
  /** Hex SHA-256 of the body (S3's x-amz-content-sha256). */
  sha256: string;
  /** Lines the export filter kept (only when one was given). */
  kept?: number;
}

/** The files' lines as one stream (each file gunzipped when it ends in `.gz`). */
function concatenated(dir: string, files: readonly string[]): Readable {
  const out = new PassThrough();
  void (async () => {
    for (const f of files) {
      const src = fs.createReadStream(path.join(dir, f));
      const steps = f.endsWith('.gz') ? [src, createGunzip()] : [src];
      // Each file goes through in turn; `end: false` keeps the joined stream open for the next.
      const last = steps.length === 1 ? src : steps[0]!.pipe(steps[1] as Transform);
      await new Promise<void>((resolve, reject) => {
        src.on('error', reject);
        last.on('error', reject);
        last.on('end', resolve);
        last.pipe(out, { end: false });
      });
    }
    out.end();
  })().catch((err: unknown) => out.destroy(err as Error));
  return out;
}

/**
 * Writes the files' content (gzipped when `gzip`) to `spool`; its length and hash. With `keep`,
 * only the data lines it keeps (the export filter of statsd and logagent).
 */
export async function spoolUnit(dir: string, files: readonly string[], spool: string, gzip: boolean, keep?: (line: string) => boolean): Promise<Spooled> {
  const hash = createHash('sha256');
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) { hash.update(chunk); bytes += chunk.length; cb(null, chunk); },
  });
  await fsp.mkdir(path.dirname(spool), { recursive: true });
  const counter = { n: 0 };
  const body = keep === undefined ? concatenated(dir, files) : Readable.from(kept(dir, files, keep, counter));
  if (gzip) await pipeline(body, createGzip(), count, fs.createWriteStream(spool));
  else await pipeline(body, count, fs.createWriteStream(spool));
  return { file: spool, bytes, sha256: hash.digest('hex'), ...(keep === undefined ? {} : { kept: counter.n }) };
}

/** The data lines of the files (W3C `#` directive lines left out), one at a time. */
export function dataLines(dir: string, files: readonly string[]): AsyncIterable<string> {
  const rl = createInterface({ input: concatenated(dir, files), crlfDelay: Infinity });
  return (async function* () {
    for await (const line of rl) if (line !== '' && !line.startsWith('#')) yield line;
  })();
}

async function* kept(dir: string, files: readonly string[], keep: (line: string) => boolean, counter: { n: number }): AsyncGenerator<string> {
  for await (const line of dataLines(dir, files)) {
    if (!keep(line)) continue;
    counter.n++;
    yield `${line}\n`;
  }
}
