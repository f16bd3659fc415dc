// The real statsd daemon (npm `statsd`, Etsy's) on loopback with its console backend: the
// counters of each flush are read from its output and summed.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';

export interface TestStatsd {
  port: number;
  /** Counter totals over every flush so far. */
  counters(): Map<string, number>;
  stop(): Promise<void>;
}

const statsJs = createRequire(import.meta.url).resolve('statsd/stats.js');

/**
 * statsd 0.9.0 (the daemon's last release) logs with `util.log`, which Node 23 removed: without
 * it the daemon dies before 'server is up'. The shim, preloaded into the daemon's process only,
 * gives it back in its old shape (a stamp, ' - ', the message).
 */
const UTIL_LOG_SHIM = "require('node:util').log = (...a) => console.log(new Date().toISOString(), '-', ...a);\n";

export async function startStatsd(): Promise<TestStatsd> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'statsd-'));
  const port = await freePort();
  const mgmt = await freePort();
  const config = path.join(dir, 'config.js');
  await fs.writeFile(config, `{ port: ${port}, address: '127.0.0.1', mgmt_port: ${mgmt}, mgmt_address: '127.0.0.1', flushInterval: 200, deleteIdleStats: true, backends: ['./backends/console'] }\n`);
  const shim = path.join(dir, 'util-log.cjs');
  await fs.writeFile(shim, UTIL_LOG_SHIM);
  const proc: ChildProcess = spawn(process.execPath, ['--require', shim, statsJs, config], { cwd: path.dirname(statsJs), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  proc.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const started = Date.now();
  while (!out.includes('server is up')) {
    if (Date.now() - started > 15_000 || proc.exitCode !== null) throw new Error(`statsd did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    port,
    counters() {
      const totals = new Map<string, number>();
      // Each flush prints `counters: { 'name': n, ... }` before `timers:`.
      for (const block of out.matchAll(/counters: \{([^}]*)\}/g)) {
        for (const m of block[1]!.matchAll(/'([^']+)': (\d+)/g)) totals.set(m[1]!, (totals.get(m[1]!) ?? 0) + Number(m[2]));
      }
      return totals;
    },
    async stop() {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
