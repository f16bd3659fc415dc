// The operator's commands of `svc` that act on a running node through its management API
// (stop, restart, reload, status, install, purge) and `svc release`. Exit codes (README, "Command line"):
// 0 done; 1 the node refused or the operation failed; 2 usage; 3 the node cannot be reached.
import { parseFlags } from '../license/cli.js';
import { buildRelease } from '../release/build.js';
import { apiBase, call } from './node-api.js';
import { printReload, printStatus, printUnserved } from './report.js';

type Out = (s: string) => void;

const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

const HELP: Record<string, string> = {
  stop: 'svc stop [--api URL | --setting PATH]\n  Drains the node (requests in flight finish) and stops it (/command/service/stop; enableRestart).',
  restart: 'svc restart [--api URL | --setting PATH]\n  Replaces every process of the node without dropping a connection; applies env changes (/command/service/restart; enableRestart).',
  reload: 'svc reload [--api URL | --setting PATH]\n  The node validates its setting file and applies it (/setting/deploy/local; enableSetting). Exit 0 applied, with the env\n  changes that wait for a restart named; exit 1 refused, each reason at its JSON path (the running setting stays).',
  status: 'svc status [--wait SECONDS] [--api URL | --setting PATH]\n  Version, processes, workers, uptime, setting generation, license and ports (/monitoring/status). Exit 3 when it does\n  not answer (with --wait: not within SECONDS).',
  install: 'svc install [VERSION] [--api URL | --setting PATH]\n  Installs VERSION (default: the newest) from env.install.repository and restarts into it (/command/install; enableInstall).',
  purge: 'svc purge TARGET... [--api URL | --setting PATH]\n  Invalidates the targets (host/path, directories ending in /, * wildcards) (/command/purge; enablePurge).',
  release: 'svc release --key PRIVATE_KEY [--out DIR] [--version X.Y.Z]\n  Packs the built checkout (npm pack) into the release repository DIR (default ./releases) with its\n  checksum and Ed25519 signature, and lists it in DIR/index.json. --version overrides package.json\'s.',
};

/** The commands handled elsewhere (bin/svc.ts, lib/license/cli.ts), for `--help`. */
const OTHER_HELP: Record<string, string> = {
  start: 'svc start [--setting PATH]\n  Runs the node: the supervisor, which holds the listening sockets, starts the primary and its RT workers.\n  Without --setting: $SVC_SETTING, else the checkout\'s setting.json.example. Exit 1 when the setting is refused.',
  validate: 'svc validate FILE\n  Checks a setting file and its linked files; prints every bad field with its JSON path. Exit 1 when refused (error 3, 4 or 5).',
  get: 'svc get QUERY [--setting PATH | --api URL]\n  The /get queries (setting.env, hosting[name=a.com], https ...) on a setting file or a running node.',
  license: 'svc license keygen --out DIR [--force] | sign --key KEY ... --out FILE | verify FILE --pub PUB\n  Issues and checks licenses (Ed25519 key pairs; the same keys sign releases).',
};

export function isOpsCommand(c: string): boolean {
  return c in HELP;
}

/** `svc COMMAND --help`: its usage, or undefined for an unknown command. */
export function helpFor(c: string): string | undefined {
  return HELP[c] ?? OTHER_HELP[c];
}

export async function opsCommand(command: string, args: string[], defaultSetting: string, projectRoot: string, out: Out, err: Out): Promise<number> {
  const { flags, positional } = parseFlags(args);
  if (command === 'release') {
    if (typeof flags.key !== 'string' || positional.length > 0) { err(`${HELP.release}\n`); return EXIT.usage; }
    try {
      const r = await buildRelease({
        root: projectRoot, key: flags.key, out: typeof flags.out === 'string' ? flags.out : 'releases',
        ...(typeof flags.version === 'string' ? { version: flags.version } : {}),
      });
      out(`${r.file}\n`);
      return EXIT.ok;
    } catch (e) {
      err(`release failed: ${(e as Error).message}\n`);
      return EXIT.failed;
    }
  }
  if ((command !== 'purge' && command !== 'install' && positional.length > 0) || (command === 'install' && positional.length > 1) || (command === 'purge' && positional.length === 0)) {
    err(`${HELP[command]}\n`);
    return EXIT.usage;
  }
  const base = await apiBase(flags, defaultSetting, err);
  const paths: Record<string, string> = {
    stop: '/command/service/stop',
    restart: '/command/service/restart',
    reload: '/setting/deploy/local',
    status: '/monitoring/status',
    install: positional[0] === undefined ? '/command/install' : `/command/install/${encodeURIComponent(positional[0])}`,
    purge: `/command/purge?url=${encodeURIComponent(positional.join('|'))}`,
  };
  const wait = command === 'status' && typeof flags.wait === 'string' ? Number(flags.wait) : 0;
  if (!Number.isFinite(wait) || wait < 0) { err(`${HELP.status}\n`); return EXIT.usage; }
  let answer = await call(base, paths[command]!);
  for (const end = Date.now() + wait * 1000; answer === undefined && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 200));
    answer = await call(base, paths[command]!);
  }
  if (answer === undefined) { err(`the node does not answer at ${base}\n`); return EXIT.unreachable; }
  const { status, body } = answer;
  if (command === 'status' && status === 200 && body.status === 'OK') {
    printStatus(base, body.result as Record<string, unknown>, out);
    return EXIT.ok;
  }
  if (command === 'reload') {
    const code = printReload(answer, out, err);
    if (code === EXIT.ok) printUnserved(await call(base, '/get/https'), err);
    return code;
  }
  const text = String(body.message ?? body.reason ?? JSON.stringify(body.result ?? body));
  if (status === 200 && body.status !== 'fail' && body.status !== 'Fail') {
    out(`${text}\n`);
    return EXIT.ok;
  }
  err(`${command} failed (${status}): ${text}\n`);
  return EXIT.failed;
}
