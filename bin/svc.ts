#!/usr/bin/env node
// Command line of the edge server.
//   svc start [--setting PATH]     run the server (primary + RT workers)
//   svc validate FILE              check a setting file; prints every bad field with its JSON path
//   svc get QUERY [--setting PATH | --api URL]   the /get queries, on a setting file or a running node
//   svc license keygen|sign|verify ...           issue and check licenses (lib/license/cli.ts)
// Without --setting, SVC_SETTING names the file; without either, the project's
// setting.json.example is used so that `npm start` works on a fresh checkout.
import cluster from 'node:cluster';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Primary } from '../lib/cluster/primary.js';
import { loadSettingFile, SettingError } from '../lib/setting/load.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function usage(): never {
  process.stderr.write([
    'usage: svc start [--setting PATH] | svc validate FILE',
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
  return path.join(projectRoot, 'setting.json.example');
}

function printIssues(err: unknown): void {
  if (err instanceof SettingError) {
    for (const i of err.issues) process.stderr.write(`${i.path || '(file)'}: ${i.message}\n`);
  } else {
    process.stderr.write(`${(err as Error).message}\n`);
  }
}

function write(stream: NodeJS.WriteStream): (s: string) => void {
  return (s) => void stream.write(s);
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  switch (command) {
    case 'start': {
      const primary = new Primary(settingPathFrom(args));
      try {
        await primary.start();
      } catch (err) {
        printIssues(err);
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
        process.exit(1);
      }
      return;
    }
    case 'validate': {
      const file = args[0];
      if (file === undefined) usage();
      try {
        await loadSettingFile(path.resolve(file));
        process.stdout.write(`${file}: OK\n`);
      } catch (err) {
        printIssues(err);
        process.exit(1);
      }
      return;
    }
    // get and license load their modules on demand, so start and validate run exactly as before.
    case 'get': {
      const { parseFlags } = await import('../lib/license/cli.js');
      const { getCommand } = await import('../lib/query/cli.js');
      const { flags, positional } = parseFlags(args);
      const query = positional[0];
      if (query === undefined || positional.length > 1 || flags.setting === true || flags.api === true) usage();
      if (flags.setting !== undefined && flags.api !== undefined) usage();
      const api = typeof flags.api === 'string' ? flags.api : undefined;
      const settingPath = typeof flags.setting === 'string' ? path.resolve(flags.setting) : settingPathFrom(args);
      const code = await getCommand(query, { settingPath, ...(api === undefined ? {} : { api }) }, write(process.stdout), write(process.stderr));
      process.exitCode = code;
      return;
    }
    case 'license': {
      const { licenseCommand } = await import('../lib/license/cli.js');
      process.exitCode = await licenseCommand(args, write(process.stdout), write(process.stderr));
      return;
    }
    default:
      usage();
  }
}

void main();
