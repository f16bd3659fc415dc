// `svc release`: a versioned package of this checkout for a release repository. The staging
// directory holds what a node runs (package.json with the release version, dist/, deploy/,
// README); `npm pack` makes the tarball (offline: no registry is asked), then the checksum, the
// signature and the repository index are written beside it.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeFileAtomic } from '../files/atomic.js';
import { compareVersions, INDEX, sha256Line, sign, tarballName, VERSION } from './format.js';

const run = promisify(execFile);
const SHIPPED = ['dist', 'deploy', 'README.md', 'setting.json.example'];

export interface ReleaseOptions {
  /** The checkout (built: dist/ present). */
  root: string;
  /** The repository directory written to. */
  out: string;
  /** PEM Ed25519 private key. */
  key: string;
  /** Default: package.json's. */
  version?: string;
}

export async function buildRelease(o: ReleaseOptions): Promise<{ file: string; version: string }> {
  const pkg = JSON.parse(await fs.readFile(path.join(o.root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const version = o.version ?? String(pkg.version);
  if (!VERSION.test(version)) throw new Error(`version "${version}" is not x.y.z[-pre]`);
  await fs.access(path.join(o.root, 'dist/bin/svc.js')).catch(() => { throw new Error(`${o.root}/dist is not built (npm run build)`); });
  const key = crypto.createPrivateKey(await fs.readFile(o.key, 'utf8'));
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${o.key} is not an Ed25519 private key`);
  const stage = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-release-'));
  try {
    // Lifecycle scripts and dev tooling have no place in a package a node installs.
    const { scripts: _scripts, devDependencies: _dev, ...shipped } = pkg;
    await fs.writeFile(path.join(stage, 'package.json'), `${JSON.stringify({ ...shipped, version }, null, 2)}\n`);
    for (const f of SHIPPED) await fs.cp(path.join(o.root, f), path.join(stage, f), { recursive: true }).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; });
    await fs.mkdir(o.out, { recursive: true });
    const out = path.resolve(o.out);
    await run('npm', ['pack', '--offline', '--pack-destination', out], { cwd: stage });
    const name = tarballName(version);
    const data = await fs.readFile(path.join(out, name));
    await writeFileAtomic(path.join(out, `${name}.sha256`), sha256Line(data, name));
    await writeFileAtomic(path.join(out, `${name}.sig`), `${sign(data, key)}\n`);
    const index = await fs.readFile(path.join(out, INDEX), 'utf8').then((t) => (JSON.parse(t) as { versions: string[] }).versions, () => [] as string[]);
    const versions = [...new Set([...index, version])].sort(compareVersions);
    await writeFileAtomic(path.join(out, INDEX), `${JSON.stringify({ versions }, null, 2)}\n`);
    return { file: path.join(out, name), version };
  } finally {
    await fs.rm(stage, { recursive: true, force: true });
  }
}
