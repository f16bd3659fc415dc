// The product version: `version` of every management envelope, hwinfo's ProductVer, and the
// answer to PURGE on the service port (which runs in the workers, without the API server). It
// is the version of the package this code came with (package.json beside dist/), so a release
// built by `svc release --version V` and installed reports V. Read once at load.
import { readFileSync } from 'node:fs';

export const PRODUCT_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
