// A worker thread (the disk writer, the census, the pagedesk editors) starts with the part of its
// process's command line node accepts in a thread: an operator's V8 flags for the workers
// (SVC_WORKER_NODE_ARGS="--trace-gc") once made node refuse the disk writer's thread.
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { threadExecArgv } from '../../lib/runtime-args.js';

/** Starts a thread with `execArgv` and resolves with what it posts (node throws on a refused flag). */
function runThread(execArgv: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const w = new Worker("require('node:worker_threads').parentPort.postMessage('up')", { eval: true, execArgv });
    w.once('message', (m) => { void w.terminate(); resolve(m); });
    w.once('error', reject);
  });
}

t.test('a thread leaves V8 and process-wide flags to its process and keeps the loader and the profilers', async (t) => {
  const argv = [
    '--max-semi-space-size=8', '--trace-gc', '--stack-size=2000', '--title=edge', '--expose-gc', '--no-opt',
    '--cpu-prof', '--cpu-prof-dir=/tmp/prof', '--heap-prof-dir', '/tmp/heap',
    '--import', 'data:text/javascript,0', '--enable-source-maps', '--import=file:///x/@tapjs/mock/import.mjs',
  ];
  const kept = threadExecArgv(argv);
  t.same(kept, ['--cpu-prof', '--cpu-prof-dir=/tmp/prof', '--import', 'data:text/javascript,0', '--enable-source-maps']);
  t.throws(() => new Worker('0', { eval: true, execArgv: argv }), { code: 'ERR_WORKER_INVALID_EXEC_ARGV' }, 'node refuses the whole line');
  t.equal(await runThread(kept.filter((a) => !a.startsWith('--cpu-prof'))), 'up', 'a thread starts with what is kept');
});

t.test('under the test loader a thread keeps the TypeScript loader and leaves the mock and process-info hooks', async (t) => {
  const kept = threadExecArgv();
  t.ok(kept.some((a) => a.includes('typescript')), JSON.stringify(kept));
  t.notOk(kept.some((a) => /mock|processinfo/.test(a)));
  t.equal(await runThread(kept), 'up');
});
