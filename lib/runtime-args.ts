// The command lines of our processes and threads. RT workers get WORKER_V8_FLAGS. A worker
// thread (the disk writer, the index census, the pagedesk editors) takes from its process's
// command line only what a thread needs: how modules load (the test loader), source maps,
// warnings and the profilers. The rest is V8's own options and process-wide ones: they apply to
// the whole process already, and node refuses them in a Worker's execArgv
// (ERR_WORKER_INVALID_EXEC_ARGV), which would stop the worker at its first disk write; an
// operator's `SVC_WORKER_NODE_ARGS="--trace-gc"` did. The test loader's process-info and mock
// flags stay with the main thread.

import v8 from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** Options a thread takes with their value, as `--x=v` or as `--x v`. */
const THREAD_VALUED = /^(--import|--require|-r|--loader|--experimental-loader|--conditions|-C)$/;
/** Options a thread takes as they are (the profilers' settings only in their `--x=v` form). */
const THREAD_FLAG = /^(--(import|require|loader|experimental-loader|conditions)=|-C=|--enable-source-maps$|--(no|trace)-warnings$|--(cpu|heap)-prof($|-[a-z]+=))/;
const MAIN_THREAD_ONLY = /processinfo|mock/;

export function threadExecArgv(argv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (THREAD_VALUED.test(a)) {
      const v = argv[++i];
      if (v !== undefined && !MAIN_THREAD_ONLY.test(v)) out.push(a, v);
    } else if (THREAD_FLAG.test(a) && !MAIN_THREAD_ONLY.test(a)) out.push(a);
  }
  return out;
}

/**
 * V8's young generation of an RT worker: 8 MB semi-spaces instead of 16 MB cost a worker about
 * 22 MB less RSS serving hit-mix (bench/memory.sh) at the same rate there and on h2; hit-1k ran
 * about 2% faster (young objects stay in cache). Smaller (4 MB) cost h2, whose streams in
 * flight then survive into the old generation, about 10%.
 */
export const WORKER_V8_FLAGS = ['--max-semi-space-size=8'];

/**
 * glibc's malloc gives each thread that allocates its own arena (up to 8 per core) and keeps what
 * a thread freed in that arena. An RT worker's V8 helper threads (concurrent marking, background
 * compilation), the disk writer thread and libuv's pool left about 47 MB in 10 arenas serving
 * hit-mix (bench/memory.sh), most of it freed memory; with one arena that was about 14 MB more
 * in the main heap and 47 MB less elsewhere, about 30 MB less RSS, at the same CPU per h2 request
 * and per miss (the bench pins a worker's threads to one core, so the arena's lock is seldom
 * contended). An operator's own MALLOC_ARENA_MAX stays (e.g. 2 where threads run on many cores).
 */
export function workerEnv(): Record<string, string> {
  return process.env.MALLOC_ARENA_MAX === undefined ? { MALLOC_ARENA_MAX: '1' } : {};
}

/**
 * A helper thread's semi-space, in MB. V8 reads --max-semi-space-size when an isolate is made,
 * and the flag wins over a Worker's resourceLimits.maxYoungGenerationSizeMb: a thread of an RT
 * worker got WORKER_V8_FLAGS' 8 MB semi-spaces (the disk writer's isolate was about 17 MB, 9 MB
 * used, serving hit-mix in bench/memory.sh), and without the flag (tests, a primary) a thread
 * may grow its young generation to 32 MB. A thread's work is small messages and index rows:
 * 1 MB semi-spaces hold what it has in flight.
 */
const THREAD_SEMI_SPACE_MB = 1;

/** The semi-space size this process was started with (0: V8's default). */
function processSemiSpaceMb(argv: readonly string[] = [...(process.env.NODE_OPTIONS ?? '').split(/\s+/), ...process.execArgv]): number {
  let mb = 0;
  for (let i = 0; i < argv.length; i++) {
    const m = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/.exec(argv[i]!);
    if (m !== null) mb = Number(m[1] ?? argv[i + 1] ?? 0);
  }
  return mb;
}

/** Threads being created while the flag says THREAD_SEMI_SPACE_MB. */
let starting = 0;

/**
 * Creates a worker thread (`create` calls `new Worker`) whose isolate gets THREAD_SEMI_SPACE_MB
 * semi-spaces: the flag is lowered while its isolate is made (until the thread is online or
 * gone) and then set back, so isolates made already keep theirs (V8 copies the flag into a heap
 * when it makes it) and the process's next ones get its own value again.
 */
export function startThread(create: () => Worker): Worker {
  if (starting++ === 0) v8.setFlagsFromString(`--max-semi-space-size=${THREAD_SEMI_SPACE_MB}`);
  let done = false;
  const restore = (): void => {
    if (done) return;
    done = true;
    if (--starting === 0) v8.setFlagsFromString(`--max-semi-space-size=${processSemiSpaceMb()}`);
  };
  let w: Worker;
  try {
    w = create();
  } catch (err) {
    restore();
    throw err;
  }
  w.once('online', restore);
  w.once('exit', restore);
  return w;
}
