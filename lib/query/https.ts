// `/get/https`: is every HTTPS service of the setting working? On a running node the workers
// say what they serve (lib/worker/tls/status.ts): a host is enabled only when every worker's
// TLS socket for it is open and its certificates in use are valid, otherwise `error` says why
// (port taken, certificate expired, RT not running). Offline (`svc get https`, no workers) the
// files are checked instead: every cert / key / ca is read and parsed with node:crypto, the key
// matched to the certificate, the validity periods checked against the clock (asynchronously);
// certificate sources given as URLs are not fetched by a read-only query: listed, not checked.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import fs from 'node:fs/promises';
import { resolvePath } from '../setting/resolve.js';
import type { HttpsCert, Setting } from '../setting/types.js';

interface HttpsEntry {
  name: string;
  enable: boolean;
  /** Why `enable` is false; absent when the service works. */
  error?: string;
  https: Array<{ cert: string; key: string; ca: string | null }>;
}

export interface HttpsReport {
  /** 200 all healthy, 404 no HTTPS service, 503 some HTTPS service not working. */
  status: 200 | 404 | 503;
  reason: string | null;
  result: HttpsEntry[];
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function isUrl(src: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(src);
}

/** The bytes of a cert/key/ca source: inline PEM, or a file (relative to env.home); undefined for a URL. */
async function readSource(setting: Setting, src: string, what: string): Promise<Buffer | undefined> {
  if (src.trimStart().startsWith('-----BEGIN')) return Buffer.from(src);
  if (isUrl(src)) return undefined;
  const file = resolvePath(setting, src);
  try {
    return await fs.readFile(file);
  } catch (err) {
    throw new Error(`${what} ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function certificates(data: Buffer, what: string, src: string): X509Certificate[] {
  const blocks = data.toString('latin1').match(PEM_CERT);
  try {
    // No PEM block: the file may be DER, which X509Certificate also reads.
    return blocks === null ? [new X509Certificate(data)] : blocks.map((b) => new X509Certificate(b));
  } catch (err) {
    throw new Error(`${what} ${src} is not a certificate: ${(err as Error).message}`);
  }
}

function checkPeriod(c: X509Certificate, what: string, src: string, now: number): void {
  if (Date.parse(c.validTo) <= now) throw new Error(`${what} ${src} expired on ${new Date(c.validTo).toISOString()}`);
  if (Date.parse(c.validFrom) > now) throw new Error(`${what} ${src} is not valid before ${new Date(c.validFrom).toISOString()}`);
}

/** Throws with the first problem of one certificate entry. */
async function checkEntry(setting: Setting, e: HttpsCert, now: number): Promise<void> {
  const [certData, keyData, caData] = await Promise.all([
    readSource(setting, e.cert, 'certificate'),
    readSource(setting, e.key, 'key'),
    e.ca === undefined || e.ca === '' ? Promise.resolve(undefined) : readSource(setting, e.ca, 'ca'),
  ]);
  let leaf: X509Certificate | undefined;
  if (certData !== undefined) {
    const chain = certificates(certData, 'certificate', e.cert);
    leaf = chain[0]!;
    for (const c of chain) checkPeriod(c, 'certificate', e.cert, now);
  }
  if (keyData !== undefined) {
    let key;
    try {
      key = createPrivateKey(keyData);
    } catch (err) {
      throw new Error(`key ${e.key} is not a usable private key: ${(err as Error).message}`);
    }
    if (leaf !== undefined && !leaf.checkPrivateKey(key)) throw new Error(`key ${e.key} does not belong to certificate ${e.cert}`);
  }
  if (caData !== undefined) for (const c of certificates(caData, 'ca', e.ca!)) checkPeriod(c, 'ca', e.ca!, now);
}

/** Each worker's view: host -> null when it serves the host over TLS, else why not. */
export type ServedTls = Array<Record<string, string | null>>;

/** Why the workers do not all serve a host over TLS; [] when they do. */
function servedProblems(served: ServedTls | Error, name: string): string[] {
  if (served instanceof Error) return [served.message];
  const problems = new Set<string>();
  for (const w of served) {
    const s = w[name];
    if (s === undefined) problems.add('no TLS socket of a worker serves it');
    else if (s !== null) problems.add(s);
  }
  return [...problems];
}

/**
 * `served`: the workers' views on a running node (an Error when they cannot be asked, e.g. RT
 * not running); undefined offline, where the files are checked.
 */
export async function checkHttps(setting: Setting, now: number = Date.now(), served?: ServedTls | Error): Promise<HttpsReport> {
  const hosts = setting.hosting.filter((h) => (h.https ?? []).length > 0);
  const result = await Promise.all(hosts.map(async (h): Promise<HttpsEntry> => {
    const https = (h.https ?? []).map((e) => ({ cert: e.cert, key: e.key, ca: e.ca ?? null }));
    if (!h.enable) return { name: h.name, enable: false, error: 'virtual host is disabled', https };
    const problems = served !== undefined ? servedProblems(served, h.name)
      : (await Promise.all((h.https ?? []).map((e) => checkEntry(setting, e, now).then(() => undefined, (err: Error) => err.message))))
        .filter((p): p is string => p !== undefined);
    return problems.length === 0 ? { name: h.name, enable: true, https } : { name: h.name, enable: false, error: problems.join('; '), https };
  }));
  // A disabled host is not an HTTPS service that fails: it is listed, but it decides nothing.
  const active = result.filter((_r, i) => hosts[i]!.enable);
  if (active.length === 0) return { status: 404, reason: 'no HTTPS service', result };
  const broken = active.filter((r) => !r.enable).map((r) => r.name);
  if (broken.length > 0) return { status: 503, reason: `HTTPS service not working: ${broken.join(', ')}`, result };
  return { status: 200, reason: null, result };
}
