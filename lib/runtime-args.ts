// The command lines of our processes and threads. RT workers get WORKER_V8_FLAGS. A worker
// thread (the disk writer, the index census, the pagedesk editors) takes its process's command
// line without V8's own options, which node refuses in a Worker's execArgv (they are the
// process's and apply to its threads already), and without the test loader's process-info and
// mock flags, which stay with the main thread.
const MAIN_THREAD_ONLY = /^--(max|min)-semi-space-size|^--max-old-space-size|^--perf-basic-prof|processinfo|mock/;

export function threadExecArgv(): string[] {
  return process.execArgv.filter((a) => !MAIN_THREAD_ONLY.test(a));
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
