// Certificate material of the hosts' https[] entries, read and checked once per apply, and the
// secure contexts built from it. The checks (parseable, key matches its certificate, inside the
// validity period) run both when a setting is validated (lib/lifecycle/candidate.ts, reported at
// the JSON path) and when a worker loads it (lib/worker/tls/plan.ts), so a file overwritten
// between the two is caught too. Both processes read this, so it lives below both, in lib/tls.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import fs from 'node:fs';
import tls from 'node:tls';
import { resolvePath } from '../setting/resolve.js';
import type { HttpsCert, Setting } from '../setting/types.js';
import type { SettingIssue } from '../setting/issues.js';
import { fetchedName, isUrlSource } from './fetched.js';
import type { TlsServerOptions } from './options.js';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

export interface CertMaterial { cert: Buffer; key: Buffer; ca: Buffer | undefined }

/** A problem of one member of one https[] entry. */
export class CertProblem extends Error {
  constructor(readonly member: 'cert' | 'key' | 'ca', message: string) {
    super(message);
  }
}

type Member = 'cert' | 'key' | 'ca';
/** Where the file of a source is: the service's files, or those of an upload being validated. */
export type Locate = (src: string, member: Member) => string;

function read(src: string, member: Member, locate: Locate): Buffer {
  // Inline PEM is accepted as /get/https always did.
  if (src.trimStart().startsWith('-----BEGIN')) return Buffer.from(src);
  const file = locate(src, member);
  try {
    return fs.readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    if (isUrlSource(src)) throw new CertProblem(member, `${src} was not fetched (${file}: ${code})`);
    throw new CertProblem(member, `${file} cannot be read: ${code}`);
  }
}

function certificates(data: Buffer, member: 'cert' | 'ca'): X509Certificate[] {
  const blocks = data.toString('latin1').match(PEM_CERT);
  if (blocks === null) throw new CertProblem(member, 'no PEM certificate in it');
  try {
    return blocks.map((b) => new X509Certificate(b));
  } catch (err) {
    throw new CertProblem(member, `not a certificate: ${(err as Error).message}`);
  }
}

function checkPeriod(c: X509Certificate, member: 'cert' | 'ca', now: number): void {
  if (Date.parse(c.validTo) <= now) throw new CertProblem(member, `certificate ${c.subject.replace(/\n/g, ', ')} expired on ${new Date(c.validTo).toISOString()}`);
  if (Date.parse(c.validFrom) > now) throw new CertProblem(member, `certificate is not valid before ${new Date(c.validFrom).toISOString()}`);
}

/** Sources relative to env.home, where the running service reads them (a URL's fetched copy). */
export function homeFiles(setting: Setting): Locate {
  return (src) => (isUrlSource(src) ? resolvePath(setting, fetchedName(src)) : resolvePath(setting, src));
}

/** Reads and checks one https[] entry; throws CertProblem. */
export function loadCert(e: HttpsCert, locate: Locate, now = Date.now()): CertMaterial {
  const cert = read(e.cert, 'cert', locate);
  const key = read(e.key, 'key', locate);
  const ca = e.ca === undefined || e.ca === '' ? undefined : read(e.ca, 'ca', locate);
  const chain = certificates(cert, 'cert');
  for (const c of chain) checkPeriod(c, 'cert', now);
  let k;
  try {
    k = createPrivateKey(key);
  } catch (err) {
    throw new CertProblem('key', `not a usable unencrypted private key: ${(err as Error).message}`);
  }
  if (k.asymmetricKeyType !== 'rsa' && k.asymmetricKeyType !== 'ec') {
    throw new CertProblem('key', `${k.asymmetricKeyType ?? 'unknown'} keys are not supported (RSA or ECDSA)`);
  }
  if (!chain[0]!.checkPrivateKey(k)) throw new CertProblem('key', 'does not match the certificate (its public key differs)');
  if (ca !== undefined) for (const c of certificates(ca, 'ca')) checkPeriod(c, 'ca', now);
  try {
    // What node:crypto accepts OpenSSL may still refuse to serve (a key too small for its
    // security level, a certificate signed with MD5): found here, not when a worker opens the port.
    tls.createSecureContext({ cert, key });
  } catch (err) {
    throw new CertProblem('key', `OpenSSL refuses to serve this certificate with this key: ${(err as Error).message}`);
  }
  return { cert, key, ca };
}

/**
 * Every problem of the certificates of the enabled hosts, each at its JSON path
 * (`hosting[i].https[j].key`). `locate(i, j)` finds the files of entry j of host i.
 */
export function certIssues(setting: Setting, locate: (i: number, j: number) => Locate, now = Date.now()): SettingIssue[] {
  const issues: SettingIssue[] = [];
  setting.hosting.forEach((h, i) => {
    if (!h.enable) return;
    (h.https ?? []).forEach((e, j) => {
      try {
        loadCert(e, locate(i, j), now);
      } catch (err) {
        if (!(err instanceof CertProblem)) throw err;
        issues.push({ path: `hosting[${i}].https[${j}].${err.member}`, message: err.message });
      }
    });
  });
  return issues;
}

/**
 * The context options of a host: every https[] entry (an RSA and an ECDSA certificate may sit
 * side by side; OpenSSL picks the one the client supports). `ca` is the chain sent after the
 * certificate, so it is appended to it (node's `ca` option would be the trust store for client
 * certificates instead).
 */
export function contextOptions(material: CertMaterial[], o: TlsServerOptions): tls.SecureContextOptions {
  return {
    ...o,
    cert: material.map((m) => (m.ca === undefined ? m.cert : Buffer.concat([m.cert, Buffer.from('\n'), m.ca]))),
    key: material.map((m) => m.key),
  };
}
