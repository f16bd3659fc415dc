// Starts the real server (compiled primary + RT workers, `dist/bin/svc.js start`) on a setting
// written to a temporary directory, and stops it with the signal a supervisor would send.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { consecutiveFreePorts, freePort } from './ports.js';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const svcJs = path.join(projectRoot, 'dist/bin/svc.js');

export interface RunningServer {
  proc: ChildProcess;
  dir: string;
  settingPath: string;
  basePort: number;
  /** Plain port of the management API. */
  apiPort: number;
  logs: string[];
  /** Waits until a log line satisfies the predicate (bounded). */
  waitForLog(pred: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM and wait for the exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
}

export interface StartOptions {
  workers?: number;
  balance?: 'rr' | 'hash';
  /** balance.luaPath (hash balance). */
  luaPath?: string;
  /** Extra members merged into the setting (meta, functions, env members). */
  extra?: Record<string, unknown>;
  env?: Record<string, string>;
  /** The svc.js to start (default: this checkout's dist/bin/svc.js). */
  entry?: string;
}

export async function writeSetting(dir: string, setting: unknown): Promise<string> {
  const p = path.join(dir, 'setting.json');
  await fs.writeFile(p, JSON.stringify(setting, null, 2));
  return p;
}

export function baseSetting(hosting: unknown[], basePort: number, opts: StartOptions = {}, apiPort = basePort + 64): Record<string, unknown> {
  const workers = opts.workers ?? 1;
  const extra = opts.extra ?? {};
  const env = (extra.env ?? {}) as Record<string, unknown>;
  const management = (env.management ?? {}) as Record<string, unknown>;
  const log = (env.log ?? {}) as Record<string, unknown>;
  return {
    ...extra,
    env: {
      home: '.',
      ...env,
      // The log listener (UDP) on the API's port number: each test node gets its own, not 8514.
      log: { ...log, meta: { port: apiPort, ...(log.meta as object | undefined) } },
      management: {
        ...management,
        api: { port: apiPort, allowList: [{ addr: '127.0.0.1', role: 'admin' }], ...(management.api as object | undefined) },
        cluster: {
          // discover, bus ... of the test; meta, balance and stats are the helper's.
          ...(management.cluster as object | undefined),
          meta: { enable: workers > 1, workers, baseHostingPort: basePort, drainTimeout: 5 },
          balance: { mode: opts.balance ?? 'rr', ...(opts.luaPath === undefined ? {} : { luaPath: opts.luaPath }) },
          stats: { enable: false, ...((management.cluster as { stats?: object } | undefined)?.stats) },
        },
      },
    },
    hosting,
  };
}

export async function startServer(hosting: unknown[], opts: StartOptions = {}): Promise<RunningServer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-test-'));
  const workers = opts.workers ?? 1;
  const basePort = await consecutiveFreePorts(workers);
  const apiPort = await freePort();
  const settingPath = await writeSetting(dir, baseSetting(hosting, basePort, opts, apiPort));
  return startWithSetting(dir, settingPath, basePort, opts.env, apiPort, opts.entry);
}

export async function startWithSetting(dir: string, settingPath: string, basePort: number, env?: Record<string, string>, apiPort = basePort + 64, entry = svcJs): Promise<RunningServer> {
  const proc = spawn(process.execPath, [entry, 'start', '--setting', settingPath], {
    cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const waiters = new Set<() => void>();
  const onText = (chunk: Buffer): void => {
    for (const line of chunk.toString().split('\n')) if (line.trim() !== '') logs.push(line);
    for (const w of waiters) w();
  };
  proc.stdout!.on('data', onText);
  proc.stderr!.on('data', onText);
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => { for (const w of waiters) w(); r(code); }));
  const parsed = (): Record<string, unknown>[] => logs.map((l) => { try { return JSON.parse(l) as Record<string, unknown>; } catch { return { msg: l }; } });
  const server: RunningServer = {
    proc, dir, settingPath, basePort, apiPort, logs, exited,
    waitForLog(pred, timeoutMs = 15000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const hit = parsed().find(pred);
          if (hit) { cleanup(); resolve(hit); } else if (proc.exitCode !== null) { cleanup(); reject(new Error(`server exited (${proc.exitCode}):\n${logs.join('\n')}`)); }
        };
        const timer = setTimeout(() => { cleanup(); reject(new Error(`log line not seen in ${timeoutMs} ms:\n${logs.join('\n')}`)); }, timeoutMs);
        const cleanup = (): void => { clearTimeout(timer); waiters.delete(check); };
        waiters.add(check);
        check();
      });
    },
    signal(sig) { proc.kill(sig); },
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 20000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  try {
    // A start takes a second or two; the bound is for a machine loaded by other test files.
    await server.waitForLog((l) => l.msg === 'started', 40_000);
  } catch (err) {
    await server.stop(); // a server that did not start in time is not left running
    throw err;
  }
  return server;
}

/** The processes whose parent is `pid` (ps). */
function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)]).toString().trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return []; // ps exits 1 when there is none
  }
}

/** The primaries of a node (children of the supervisor `svc start`): one, or two during a restart. */
export function primaryPids(server: RunningServer): number[] {
  return childPids(server.proc.pid!);
}

/** The RT workers of every primary of the node. */
export function workerPids(server: RunningServer): number[] {
  return primaryPids(server).flatMap(childPids);
}

const ALL_PERMISSIONS = {
  enableSetting: true, enablePurge: true, enableMetric: true, enableGraph: true, enableMonitoring: true,
  enableInstall: true, enableRestart: true, enableGet: true, enableCluster: true,
};
/** `extra` of a node whose loopback admin may do everything (restart, install ...); logs under `svclog`. */
export const operatorRole = { env: { log: { meta: { dir: 'svclog' } }, management: { api: { roles: [{ name: 'admin', permissions: ALL_PERMISSIONS }] } } } };
