// Certificate sources given as URLs (`hosting[].https[].cert|key|ca`). The primary fetches
// them when a setting is loaded (lib/lifecycle/url-sources.ts) into one file per URL under
// the service home, and packages that file into the setting history; the workers read the file,
// never the network, so a worker start or a restore needs no network.
import { createHash } from 'node:crypto';

const URL_RE = /^[a-z][a-z0-9+.-]*:\/\//i;

export function isUrlSource(src: string): boolean {
  return URL_RE.test(src);
}

/** Where the content of a URL source is kept, relative to the service home (and in a package). */
export function fetchedName(url: string): string {
  return `fetched-certs/${createHash('sha256').update(url).digest('hex').slice(0, 40)}.pem`;
}
