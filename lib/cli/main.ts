// Command line of the edge server (bin/svc.ts checks the runtime, then loads this module).
//   svc start [--setting PATH]     run the server (primary + RT workers)
//   svc validate FILE              check a setting file; prints every bad field with its JSON path
//   svc get QUERY [--setting PATH | --api URL]   the /get queries, on a setting file or a running node
//   svc license keygen|sign|verify ...           issue and check licenses (lib/license/cli.ts)
//   svc stop|restart|reload|status|install|purge ...   act on a running node (lib/cli/ops.ts)
//   svc --version                                 the version of this svc
//   svc release --key KEY ...                    a signed package of this checkout (lib/release)
// Each command takes --help. Exit codes: 0 done, 1 failed, 2 usage, 3 node unreachable.
// Without --setting, SVC_SETTING names the file; without either, an installed release
// (<home>/app/<version>, README "Deploying") uses <home>/setting.json, the file its systemd unit
// starts it with, and a checkout its setting.json.example so that `npm start` works at once.
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// Only light modules statically: `svc start` (the supervisor) and the API commands load little;
// the primary's module graph is loaded by the primary process alone.
import type { SettingIssue } from '../setting/issues.js';
import { SIBLING_SECRET_ENV } from '../ipc/messages.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function usage(): never {
  process.stderr.write([
    'usage: svc start [--setting PATH] | svc validate FILE',
    '       svc stop | restart | reload | status | install [VERSION] | purge TARGET...   [--api URL | --setting PATH]   (the running node)',
    '       svc --version',
    '       svc release --key KEY [--out DIR] [--version X.Y.Z]   (a signed package for a release repository)',
    '       svc get QUERY [--setting PATH | --api http://HOST:PORT]   e.g. setting.env, hosting[name=a.com], https',
    '       svc license keygen|sign|verify ...   (svc license alone prints its usage)',
  ].join('\n') + '\n');
  process.exit(2);
}

function settingPathFrom(args: string[]): string {
  const at = args.indexOf('--setting');
  if (at >= 0) {
    const p = args[at + 1];
    if (p === undefined) usage();
    return path.resolve(p);
  }
  if (process.env.SVC_SETTING) return path.resolve(process.env.SVC_SETTING);
  return defaultSettingPath();
}

/** An installed release's <home>/setting.json when there is one, else the checkout's example. */
function defaultSettingPath(): string {
  const installed = path.resolve(projectRoot, '../../setting.json');
  if (path.basename(path.dirname(projectRoot)) === 'app' && existsSync(installed)) return installed;
  return path.join(projectRoot, 'setting.json.example');
}

/** A SettingError's issues (checked by shape: the setting modules are not loaded here). */
function issuesOf(err: unknown): SettingIssue[] | undefined {
  const issues = (err as { issues?: unknown } | null)?.issues;
  return Array.isArray(issues) ? (issues as SettingIssue[]) : undefined;
}

function printIssues(err: unknown): void {
  const issues = issuesOf(err);
  if (issues !== undefined) {
    for (const i of issues) process.stderr.write(`${i.path || '(file)'}: ${i.message}\n`);
  } else {
    process.stderr.write(`${(err as Error).message}\n`);
  }
}

function write(stream: NodeJS.WriteStream): (s: string) => void {
  return (s) => void stream.write(s);
}

/**
 * `svc validate FILE`: the checks of an upload (`POST /setting/validate` with its files): every
 * bad field with its JSON path, then the linked files (certificates, basehost files) relative to
 * the file's directory and its env.home. Failures print `error <code>: <reason>` with the codes
 * 1-5 of document 1 (exit 1).
 */
async function validateFile(file: string): Promise<number> {
  const abs = path.resolve(file);
  try {
    const { loadSettingFile } = await import('../setting-check/load.js');
    await loadSettingFile(abs);
  } catch (err) {
    const code = issuesOf(err)?.some((i) => i.path !== '') === true ? 4 : 3;
    process.stderr.write(`error ${code}: ${code === 4 ? 'setting.json content is wrong' : 'setting.json cannot be loaded'}\n`);
    printIssues(err);
    return 1;
  }
  const { loadCandidate, LoadFailure } = await import('../lifecycle/candidate.js');
  const { linkedFileDirs } = await import('../lifecycle/linked-dirs.js');
  const fs = await import('node:fs/promises');
  try {
    const text = await fs.readFile(abs, 'utf8');
    const base = { settingDir: path.dirname(abs), runningHome: path.dirname(abs) };
    // Certificates of hosts resolve against the env.home the file itself declares, and linked
    // files must lie under that home or the file's own env.linkedFileDirs.
    const parsed = await loadCandidate(text, { ...base, checkFiles: false });
    const linkedDirs = linkedFileDirs(parsed.setting.env);
    await loadCandidate(text, { ...base, runningHome: parsed.setting.env.home, checkFiles: true, linkedDirs });
    const { settingWarnings } = await import('../setting-check/warnings.js');
    for (const w of settingWarnings(parsed.setting, parsed.raw)) process.stderr.write(`warning: ${w}
`);
  } catch (err) {
    if (!(err instanceof LoadFailure)) throw err;
    // With the members at fault, one per line at its JSON path, as the schema's issues are.
    if (err.issues !== undefined) {
      process.stderr.write(`error ${err.code}: ${err.code === 5 ? 'linked file not found' : 'setting.json content is wrong'}\n`);
      for (const i of err.issues) process.stderr.write(`${i.path || '(file)'}: ${i.message}\n`);
    } else {
      process.stderr.write(`error ${err.code}: ${err.message}\n`);
    }
    return 1;
  }
  process.stdout.write(`${file}: OK\n`);
  return 0;
}

/** `svc start`: the supervisor holds the sockets and starts the primary (run-primary) under it. */
async function startSupervisor(args: string[]): Promise<void> {
  const { Supervisor } = await import('../supervisor/supervisor.js');
  const { randomBytes } = await import('node:crypto');
  // One sibling secret for every primary generation: during a restart old and new workers
  // hand requests to each other's internal ports.
  process.env[SIBLING_SECRET_ENV] ||= randomBytes(32).toString('base64url');
  new Supervisor(process.argv[1]!, settingPathFrom(args)).start();
}

/** The primary process, forked by the supervisor; a start that fails tells the supervisor why. */
async function runPrimary(args: string[]): Promise<void> {
  const { Primary } = await import('../primary/primary.js');
  const settingPath = settingPathFrom(args);
  const primary = new Primary(settingPath);
  try {
    await primary.start();
  } catch (err) {
    // The file named, so that an operator with several setting files knows which port is meant.
    process.stderr.write(`the node cannot start with ${settingPath}:\n`);
    printIssues(err);
    await primary.supervisor.startFailed(issuesOf(err)?.map((i) => `${i.path}: ${i.message}`).join('; ') ?? (err as Error).message);
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
    process.exit(1);
  }
}

/** `svc get QUERY`: on a setting file or, with --api, a running node; resolves to the exit code. */
async function getQuery(args: string[]): Promise<number> {
  const { parseFlags } = await import('../license/cli.js');
  const { getCommand } = await import('../query/cli.js');
  const { flags, positional } = parseFlags(args);
  const query = positional[0];
  if (query === undefined || positional.length > 1 || flags.setting === true || flags.api === true) usage();
  if (flags.setting !== undefined && flags.api !== undefined) usage();
  const api = typeof flags.api === 'string' ? flags.api : undefined;
  const settingPath = typeof flags.setting === 'string' ? path.resolve(flags.setting) : settingPathFrom(args);
  return getCommand(query, { settingPath, ...(api === undefined ? {} : { api }) }, write(process.stdout), write(process.stderr));
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  if (command === '--version' || command === '-V' || command === 'version') {
    const { PRODUCT_VERSION } = await import('../version.js');
    process.stdout.write(`svc ${PRODUCT_VERSION} (node ${process.version})\n`);
    return;
  }
  if (command !== undefined && (args.includes('--help') || args.includes('-h'))) {
    const { helpFor } = await import('./ops.js');
    const help = helpFor(command);
    if (help === undefined) usage();
    process.stdout.write(`${help}\n`);
    return;
  }
  switch (command) {
    case 'start':
      await startSupervisor(args);
      return;
    case 'run-primary':
      await runPrimary(args);
      return;
    case 'validate': {
      const file = args[0];
      if (file === undefined) usage();
      process.exitCode = await validateFile(file);
      return;
    }
    // get and license load their modules on demand, so start and validate run exactly as before.
    case 'get':
      process.exitCode = await getQuery(args);
      return;
    case 'license': {
      const { licenseCommand } = await import('../license/cli.js');
      process.exitCode = await licenseCommand(args, write(process.stdout), write(process.stderr));
      return;
    }
    default: {
      const { isOpsCommand, opsCommand } = await import('./ops.js');
      if (command === undefined || !isOpsCommand(command)) usage();
      process.exitCode = await opsCommand(command, args, settingPathFrom([]), projectRoot, write(process.stdout), write(process.stderr));
    }
  }
}

/** The supervisor forks this entry (bin/svc.js) again for the primary: argv[1] stays bin/svc.js. */
export function run(): void {
  void main();
}
