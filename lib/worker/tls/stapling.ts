// OCSP stapling: for each certificate that names an OCSP responder (and whose host has
// httpsOptions.ocspStapling on), the worker asks the responder off the request path, keeps the
// response until its nextUpdate and refreshes it halfway there; a TLS handshake that asks for
// the status gets it stapled (tls-server.ts). A responder that fails keeps the previous response
// while it is valid and is asked again in RETRY_MS.
import { X509Certificate } from 'node:crypto';
import { systemLog } from '../../log/system-log.js';
import { certId, ocspRequest, parseResponse, responderUrl, type CertId } from './ocsp.js';
import type { CertMaterial } from '../../tls/certificates.js';

const FETCH_TIMEOUT_MS = 10_000;
const RETRY_MS = 5 * 60_000;
/** A response without nextUpdate is used this long (newer information is always available). */
const NO_NEXT_UPDATE_MS = 60 * 60_000;
const MIN_REFRESH_MS = 60_000;
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

interface Entry { id: CertId; url: string; der: Buffer | undefined; until: number; timer: NodeJS.Timeout | undefined }

/**
 * What to ask for one host's certificates: the leaf and its issuer (next in the chain, else the
 * first of `ca`), with a responder URL. A host with several certificates is not stapled: the
 * response is chosen before OpenSSL picks the certificate by the client's key types.
 */
export function stapleTarget(material: CertMaterial[]): { key: string; leaf: X509Certificate; issuer: X509Certificate; url: string } | undefined {
  if (material.length !== 1) return undefined;
  const m = material[0]!;
  const chain = [...m.cert.toString('latin1').matchAll(PEM_CERT), ...(m.ca?.toString('latin1').matchAll(PEM_CERT) ?? [])].map((x) => new X509Certificate(x[0]));
  const leaf = chain[0];
  const issuer = chain.slice(1).find((c) => leaf !== undefined && leaf.checkIssued(c));
  const url = leaf === undefined ? undefined : responderUrl(leaf);
  if (leaf === undefined || issuer === undefined || url === undefined) return undefined;
  return { key: leaf.fingerprint256, leaf, issuer, url };
}

export class Stapler {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The certificates to keep responses for, from now on; the others are dropped. */
  track(targets: Array<NonNullable<ReturnType<typeof stapleTarget>>>): void {
    const wanted = new Set(targets.map((t) => t.key));
    for (const [key, e] of this.entries) {
      if (!wanted.has(key)) { clearTimeout(e.timer); this.entries.delete(key); }
    }
    for (const t of targets) {
      if (this.entries.has(t.key)) continue;
      const e: Entry = { id: certId(t.leaf, t.issuer), url: t.url, der: undefined, until: 0, timer: undefined };
      this.entries.set(t.key, e);
      void this.refresh(t.key, e);
    }
  }

  /** The response to staple for a certificate (its fingerprint), while it is valid. */
  staple(key: string): Buffer | undefined {
    const e = this.entries.get(key);
    return e !== undefined && e.der !== undefined && this.now() < e.until ? e.der : undefined;
  }

  private async refresh(key: string, e: Entry): Promise<void> {
    let next = RETRY_MS;
    try {
      const res = await fetch(e.url, {
        method: 'POST', headers: { 'content-type': 'application/ocsp-request' }, body: new Uint8Array(ocspRequest(e.id)), signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (res.status !== 200) throw new Error(`answered ${res.status}`);
      const der = Buffer.from(await res.arrayBuffer());
      const a = parseResponse(der, e.id);
      if (a.status === 'unknown') throw new Error('the responder does not know the certificate');
      const now = this.now();
      e.der = der;
      e.until = a.nextUpdate ?? now + NO_NEXT_UPDATE_MS;
      next = Math.max(MIN_REFRESH_MS, (e.until - now) / 2);
    } catch (err) {
      systemLog.warn({ responder: e.url, err: (err as Error).message }, 'OCSP response not fetched; asking again later');
    }
    if (this.entries.get(key) !== e) return;
    e.timer = setTimeout(() => void this.refresh(key, e), next);
    e.timer.unref();
  }
}
