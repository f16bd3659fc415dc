// A real redis-server (Debian's) for a test: its own free port on 127.0.0.1, nothing saved to
// disk, stopped by the test's teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';

export interface TestRedis { port: number; url: string; stop(): Promise<void> }

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const proc: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server not ready in 10 s:\n${out}`)), 10_000);
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('Ready to accept connections')) { clearTimeout(timer); resolve(); }
    });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`redis-server exited (${code}):\n${out}`)); });
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (proc.exitCode !== null) return;
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await gone;
    },
  };
}
