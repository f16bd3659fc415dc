// Shared by the TLS black-box tests: test certificates made with the openssl CLI (test fixtures
// only, made fresh in a temporary directory, never committed), a node started on them, and the
// real clients (curl, openssl s_client) run against it.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { consecutiveFreePorts, freePort } from '../../helpers/ports.js';
import { baseSetting, startWithSetting, writeSetting, type RunningServer } from '../../helpers/server.js';
import { TestOrigin } from '../../helpers/origin.js';

/** A self-signed certificate for `cn` (with `sans` as DNS names) in `dir`: <file>.crt, <file>.key. */
export function makeCert(dir: string, file: string, cn: string, o: { sans?: string[]; ec?: boolean; days?: number } = {}): void {
  const key = o.ec === true ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', 'rsa:2048'];
  const sans = [cn, ...(o.sans ?? [])].map((n) => `DNS:${n}`).join(',');
  execFileSync('openssl', ['req', '-x509', ...key, '-nodes', '-subj', `/CN=${cn}`, '-days', String(o.days ?? 30),
    '-addext', `subjectAltName=${sans}`, '-keyout', path.join(dir, `${file}.key`), '-out', path.join(dir, `${file}.crt`)], { stdio: 'ignore' });
}

export interface TlsNode { server: RunningServer; dir: string; tlsPort: number; plainPort: number; origin: TestOrigin }

/**
 * A node whose hosts (given without listen/origin) listen plain on one port and TLS on another,
 * with certificates the caller makes in `dir` through `prepare` before the start.
 */
export async function tlsNode(t: Test, hosts: Array<Record<string, unknown>>, prepare: (dir: string) => void | Promise<void>,
  extra: Record<string, unknown> = {}, env?: Record<string, string>, workers = 1): Promise<TlsNode> {
  const origin = await new TestOrigin().start();
  t.teardown(() => origin.stop());
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-tls-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await prepare(dir);
  const plainPort = await freePort();
  const tlsPort = await freePort();
  const basePort = await consecutiveFreePorts(workers);
  const apiPort = await freePort();
  const hosting = hosts.map((h) => ({
    listen: `127.0.0.1:${plainPort}`, origin: { address: [`127.0.0.1:${origin.port}`] }, ...h,
    httpsOptions: { listen: `127.0.0.1:${tlsPort}`, ...(h.httpsOptions as object | undefined) },
  }));
  const settingPath = await writeSetting(dir, baseSetting(hosting, basePort, { extra, workers }, apiPort));
  const server = await startWithSetting(dir, settingPath, basePort, env, apiPort);
  t.teardown(() => server.stop());
  return { server, dir, tlsPort, plainPort, origin };
}

export interface Run { code: number; stdout: string; stderr: string }

export function run(cmd: string, args: string[], input = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
    // A client that exits without reading its input must not fail the test with EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

/** The subject CN of the certificate the server presents, or undefined when the handshake fails. */
export async function presentedCn(port: number, args: string[]): Promise<{ cn: string | undefined; out: Run }> {
  const out = await run('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...args]);
  const m = /subject=.*?CN\s*=\s*([^,\n/]+)/.exec(out.stdout);
  return { cn: out.code === 0 && m !== null ? m[1]!.trim() : undefined, out };
}

/** curl over TLS to `name` (resolved to loopback), trusting `ca`; -i so the head is in stdout. */
export function curl(port: number, name: string, urlPath: string, ca: string, args: string[] = []): Promise<Run> {
  return run('curl', ['-sS', '-i', '--max-time', '10', '--cacert', ca, '--resolve', `${name}:${port}:127.0.0.1`, ...args, `https://${name}:${port}${urlPath}`]);
}
