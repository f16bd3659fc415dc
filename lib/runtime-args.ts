// The command lines of our processes and threads. RT workers get WORKER_V8_FLAGS. A worker
// thread (the disk writer, the index census, the pagedesk editors) takes from its process's
// command line only what a thread needs: how modules load (the test loader), source maps,
// warnings and the profilers. The rest is V8's own options and process-wide ones: they apply to
// the whole process already, and node refuses them in a Worker's execArgv
// (ERR_WORKER_INVALID_EXEC_ARGV), which would stop the worker at its first disk write; an
// operator's `SVC_WORKER_NODE_ARGS="--trace-gc"` did. The test loader's process-info and mock
// flags stay with the main thread.

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
