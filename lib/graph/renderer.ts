// The render queue: one piscina thread drawing one graph at a time (document 1), off the
// primary's event loop. Further callers wait in the queue; past QUEUE_LIMIT waiting graphs a
// caller is told to come back (GRAPH_BUSY, 503) instead of the primary holding every one.
import { Piscina } from 'piscina';
import type { DrawJob } from './draw.js';
import { codedError } from '../errors/codes.js';

const QUEUE_LIMIT = 64;


/** The compiled entry beside the compiled library; under the test loader the .ts source. */
function threadEntry(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../workers/graph-render.${ext}`, import.meta.url).href;
}

export class GraphRenderer {
  private readonly pool = new Piscina<DrawJob, Uint8Array>({
    filename: threadEntry(),
    minThreads: 0,
    maxThreads: 1,
    concurrentTasksPerWorker: 1,
    // The thread (Skia, fonts: tens of MB) goes when nobody looked at a graph for a minute.
    idleTimeout: 60_000,
    maxQueue: QUEUE_LIMIT,
  });

  async render(job: DrawJob): Promise<Buffer> {
    if (this.pool.queueSize >= QUEUE_LIMIT) throw codedError('GRAPH_BUSY', QUEUE_LIMIT);
    const png = await this.pool.run(job);
    return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
