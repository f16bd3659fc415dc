// A real Prometheus server (Debian package `prometheus`) on a free loopback port, scraping one
// target every second, for tests that check what a scraper makes of /metrics.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { freePort } from './ports.js';

export interface RunningPrometheus {
  /** Runs an instant PromQL query; the first sample's value, or undefined when none. */
  query(promql: string): Promise<number | undefined>;
  stop(): Promise<void>;
}

export async function startPrometheus(dir: string, target: string): Promise<RunningPrometheus> {
  const port = await freePort();
  const config = path.join(dir, 'prometheus.yml');
  await fs.writeFile(config, `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: svc\n    static_configs:\n      - targets: ['${target}']\n`);
  const proc: ChildProcess = spawn('prometheus', [
    `--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    async query(promql) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`);
        const j = (await r.json()) as { data?: { result?: Array<{ value: [number, string] }> } };
        const v = j.data?.result?.[0]?.value[1];
        return v === undefined ? undefined : Number(v);
      } catch {
        return undefined; // not listening yet
      }
    },
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
