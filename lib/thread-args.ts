// What a worker thread (the disk writer, the index census, the pagedesk editors) takes of its
// process's command line. node refuses V8's own options in a Worker's execArgv: they are the
// process's and already apply to its threads (the RT workers run with --max-semi-space-size,
// lib/primary/primary.ts). The test loader's process-info and mock flags stay with the main
// thread.
const MAIN_THREAD_ONLY = /^--(max|min)-semi-space-size|^--max-old-space-size|^--perf-basic-prof|processinfo|mock/;

export function threadExecArgv(): string[] {
  return process.execArgv.filter((a) => !MAIN_THREAD_ONLY.test(a));
}
