// The product version: `version` of every management envelope, hwinfo's ProductVer, and the
// answer to PURGE on the service port (which runs in the workers, without the API server). It
// is the version of the package this code came with (package.json at the package root), so a
// release built by `svc release --version V` and installed reports V. Read once at load.
import { existsSync, readFileSync } from 'node:fs';

// Compiled, this file is dist/lib/version.js; run from source (the tests), lib/version.ts.
const packageJson = [new URL('../../package.json', import.meta.url), new URL('../package.json', import.meta.url)]
  .find((u) => u.pathname.endsWith('/package.json') && existsSync(u) && isOurs(u))!;

function isOurs(u: URL): boolean {
  return (JSON.parse(readFileSync(u, 'utf8')) as { name?: string }).name === 'svc-edge';
}

export const PRODUCT_VERSION: string = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
