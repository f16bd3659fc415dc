// The edit threads of a worker: piscina running workers/pagedesk-edit (cheerio), so a DOM edit
// never runs on the event loop that serves requests. Bounded in concurrency (EDIT_THREADS at
// once, EDIT_QUEUE waiting) and in time (EDIT_TIMEOUT_MS per edit: the thread running a late
// edit is terminated). What cannot be edited in those bounds goes out unedited (the caller).
import type { Piscina } from 'piscina';
import { threadExecArgv } from '../runtime-args.js';
import type { EditJob, EditResult } from './edit.js';

const EDIT_THREADS = 1;
const EDIT_QUEUE = 16;
const EDIT_TIMEOUT_MS = 10_000;

/**
 * piscina, imported at the first edit: a worker whose hosts never edit (the usual setting) does
 * not load it, about 1 MB of heap less in every RT worker.
 */
let piscina: Promise<typeof Piscina> | undefined;

/** The compiled entry beside the compiled library; under the test loader the .ts source. */
function threadEntry(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../workers/pagedesk-edit.${ext}`, import.meta.url).href;
}

export class EditPool {
  private pool: Piscina<EditJob, EditResult> | undefined;

  constructor(private readonly timeoutMs = EDIT_TIMEOUT_MS) {}

  /** Resolves to the edit, or to `unedited` when the pool is full, the edit failed or ran late. */
  async edit(job: EditJob): Promise<EditResult> {
    // Started at the first edit: a worker whose hosts never edit has no thread.
    const Pool = await (piscina ??= import('piscina').then((m) => m.Piscina));
    const pool = this.pool ??= new Pool<EditJob, EditResult>({
      filename: threadEntry(),
      minThreads: 0,
      maxThreads: EDIT_THREADS,
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
      maxQueue: EDIT_QUEUE,
      execArgv: threadExecArgv(),
    });
    if (pool.queueSize >= EDIT_QUEUE) return { outcome: 'unedited', reason: `${EDIT_QUEUE} edits already waiting` };
    try {
      return await pool.run(job, { signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      const e = err as Error;
      const late = e.name === 'AbortError' || e.name === 'TimeoutError';
      return { outcome: 'unedited', reason: late ? `edit took longer than ${this.timeoutMs} ms` : `edit failed: ${e.message}` };
    }
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.pool = undefined;
  }
}
