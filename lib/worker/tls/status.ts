// What a worker's TLS sockets really serve, for `/get/https`: per host, null when its TLS socket
// is open and its loaded certificates are inside their validity period, otherwise why not (the
// socket could not be opened: port taken, no permission, address gone; a certificate that
// expired since it was loaded). The certificates read are those in use, not the files on disk.
import { X509Certificate } from 'node:crypto';
import type { TlsHostStatus } from '../../ipc/messages.js';
import { listenKey } from '../../routing/vhost-table.js';
import type { TlsPort } from './sni.js';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/** The key of a TLS socket among a worker's listening sockets. */
export function tlsKey(p: TlsPort): string {
  return `tls ${listenKey(p.listen)}`;
}

function expiry(cert: Buffer, now: number): string | undefined {
  const pem = PEM_CERT.exec(cert.toString('latin1'));
  if (pem === null) return undefined;
  const c = new X509Certificate(pem[0]);
  const end = Date.parse(c.validTo);
  return end <= now ? `certificate ${c.subject.replace(/\n/g, ', ')} expired on ${new Date(end).toISOString()}` : undefined;
}

/** `failed`: socket key -> the error of its listen. */
export function tlsStatus(ports: TlsPort[], failed: ReadonlyMap<string, string>, now = Date.now()): TlsHostStatus {
  const out: TlsHostStatus = {};
  for (const p of ports) {
    const listenError = failed.get(tlsKey(p));
    for (const h of p.hosts) {
      if (typeof out[h.name] === 'string') continue;
      out[h.name] = listenError !== undefined ? `TLS port ${listenKey(p.listen)} cannot be opened: ${listenError}`
        : h.material.map((m) => expiry(m.cert, now)).find((e) => e !== undefined) ?? null;
    }
  }
  return out;
}
