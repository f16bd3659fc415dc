// How long the management API takes to answer while a node is busy, judged beside an idle
// control process (the machine itself may keep any process waiting: other tests, the node's own
// workers). Shared by the tests that bound the API's answer time under a large invalidation.
import { spawn } from 'node:child_process';
import type { Test } from 'tap';
import { request } from 'undici';
import { within } from './wait.js';

/** Milliseconds an answer of `url` takes; Infinity when there is none within 5 s. */
export async function latency(url: string): Promise<number> {
  const started = performance.now();
  try {
    const r = await request(url, { signal: AbortSignal.timeout(5000) });
    await r.body.text();
  } catch {
    return Infinity;
  }
  return performance.now() - started;
}

/** A trivial HTTP server in a process of its own, stopped at the test's end: the control. */
export async function startControl(t: Test): Promise<{ url: string }> {
  const proc = spawn(process.execPath, ['-e', "require('http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log(this.address().port); })"],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => proc.kill());
  const port = await within(new Promise<string>((r) => proc.stdout!.once('data', (d: Buffer) => r(d.toString().trim()))), 10_000, 'a control server');
  return { url: `http://127.0.0.1:${port}/` };
}
