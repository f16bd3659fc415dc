// The release repository format shared by `svc release` (which writes it) and
// `/command/install` (which reads it): for each version `<name>-<version>.tgz` (npm pack),
// `.sha256` (sha256sum line) and `.sig` (base64 Ed25519 signature of the tarball's bytes), and
// `index.json` `{"versions": [...]}` listing what the repository holds.
import crypto, { type KeyObject } from 'node:crypto';

const PACKAGE_NAME = 'svc-edge';
export const INDEX = 'index.json';

export function tarballName(version: string): string {
  return `${PACKAGE_NAME}-${version}.tgz`;
}

/** x.y.z with an optional -pre.release: also a safe file name part. */
export const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/** Orders versions by their numeric parts (a pre-release sorts before its release). */
export function compareVersions(a: string, b: string): number {
  const [ma, pa] = a.split('-', 2) as [string, string | undefined];
  const [mb, pb] = b.split('-', 2) as [string, string | undefined];
  const na = ma.split('.').map(Number);
  const nb = mb.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (na[i] !== nb[i]) return na[i]! - nb[i]!;
  if (pa === pb) return 0;
  if (pa === undefined) return 1;
  if (pb === undefined) return -1;
  return pa < pb ? -1 : 1;
}

export function sha256Line(data: Buffer, name: string): string {
  return `${crypto.createHash('sha256').update(data).digest('hex')}  ${name}\n`;
}

export function sign(data: Buffer, key: KeyObject): string {
  return crypto.sign(null, data, key).toString('base64');
}

/** Why a package is refused, or undefined when its checksum and signature hold. */
export function packageProblem(data: Buffer, name: string, sha: string | undefined, sig: string | undefined, key: KeyObject): string | undefined {
  if (sha === undefined) return `${name}.sha256 is missing`;
  if (sha.trim().split(/\s+/)[0] !== sha256Line(data, name).split(' ')[0]) return `${name} does not match its checksum (corrupted)`;
  if (sig === undefined) return `${name} is not signed (${name}.sig is missing)`;
  let ok = false;
  try {
    ok = crypto.verify(null, data, key, Buffer.from(sig.trim(), 'base64'));
  } catch { /* a malformed signature */ }
  return ok ? undefined : `${name}: the signature does not verify against the release public key`;
}
