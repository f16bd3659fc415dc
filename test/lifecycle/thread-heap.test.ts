// A helper thread (the disk writer) gets a small young generation of its own: V8's semi-space
// flag, which an RT worker runs with (8 MB), wins over a Worker's resourceLimits, so the thread
// could grow a young generation of 16 MB (32 MB without the flag) for its small messages.
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { startThread } from '../../lib/runtime-args.js';

/** A thread that keeps 20,000 small objects alive at a time (so its young generation grows) and posts its new space's size. */
const CHURN = `const v8 = require('node:v8');
let keep = [];
for (let i = 0; i < 1500000; i++) { keep.push({ a: i, b: [i] }); if (keep.length > 20000) keep = []; }
const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
require('node:worker_threads').parentPort.postMessage(s.space_size);`;

async function newSpaceOf(w: Worker): Promise<number> {
  const size = await new Promise<number>((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
  await w.terminate();
  return size;
}

t.test('a thread started by startThread grows its new space to 1 MB semi-spaces, and the next plain thread gets the process default again', async (t) => {
  const small = await newSpaceOf(startThread(() => new Worker(CHURN, { eval: true })));
  t.ok(small <= 3 * 1024 * 1024, `new space ${small} bytes`);
  // Checked after: the flag was set back once the thread was online.
  const plain = await newSpaceOf(new Worker(CHURN, { eval: true }));
  t.ok(plain > 3 * 1024 * 1024, `a plain thread's new space ${plain} bytes`);
});

t.test('a thread that cannot be created leaves the flag as it was', async (t) => {
  t.throws(() => startThread(() => new Worker('0', { eval: true, execArgv: ['--title=x'] })), { code: 'ERR_WORKER_INVALID_EXEC_ARGV' });
  const plain = await newSpaceOf(new Worker(CHURN, { eval: true }));
  t.ok(plain > 3 * 1024 * 1024, `a plain thread's new space ${plain} bytes`);
});
