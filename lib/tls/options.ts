// The "https options" of a host (document 2) as node:tls server options, and the rules that
// refuse what this node/OpenSSL 3 build cannot do, at the option's JSON path. One TLS socket
// serves every host of its listen: OpenSSL takes the protocol versions and the cipher list from
// the socket's default context, not from the context SNI selects, so the hosts sharing a listen
// must agree on these options (checked in checkTlsPorts).
import { constants } from 'node:crypto';
import tls, { type SecureVersion } from 'node:tls';
import type { SettingIssue } from '../setting/issues.js';
import type { HttpsOptions } from '../setting/types.js';

/** The spec's default expression: it names suites OpenSSL 3 dropped (SSLv2, export, RC4). */
const SPEC_DEFAULT_CIPHERS = 'ALL:!ADH:RC4+RSA:+HIGH:+MEDIUM:+LOW:+SSLv2:+EXP';

/** Lowest to highest, as the enable flags name them. */
const VERSIONS: { flag: 'enableTls10' | 'enableTls11' | 'enableTls12' | 'enableTls13'; name: SecureVersion }[] = [
  { flag: 'enableTls10', name: 'TLSv1' },
  { flag: 'enableTls11', name: 'TLSv1.1' },
  { flag: 'enableTls12', name: 'TLSv1.2' },
  { flag: 'enableTls13', name: 'TLSv1.3' },
];

export type TlsServerOptions = Pick<tls.SecureContextOptions, 'minVersion' | 'maxVersion' | 'ciphers' | 'honorCipherOrder' | 'secureOptions'>;

/**
 * The enabled versions as one range, or why they are not one: OpenSSL 3 sets a minimum and a
 * maximum, and a gap (1.3 and 1.1 without 1.2) cannot be expressed without deprecated flags.
 */
type Range = { min: SecureVersion; max: SecureVersion };
type RangeError = { flag: string; message: string };

function versionRange(o: HttpsOptions): Range | RangeError {
  const on = VERSIONS.map((v) => o[v.flag]);
  const first = on.indexOf(true);
  const last = on.lastIndexOf(true);
  if (first < 0) return { flag: 'enableTls13', message: 'no TLS version is enabled: enable at least one of enableTls10..enableTls13' };
  for (let i = first; i <= last; i++) {
    if (!on[i]) return { flag: VERSIONS[i]!.flag, message: 'false between enabled versions: the enabled TLS versions must be consecutive' };
  }
  return { min: VERSIONS[first]!.name, max: VERSIONS[last]!.name };
}

/**
 * The TLS 1.2 suites the spec's default stands for: forward-secret AEAD suites only (Mozilla's
 * "intermediate" list), no CBC (LUCKY13), RC4, 3DES, export or anonymous suites.
 */
const SAFE_TLS12 = 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:'
  + 'ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305';

/**
 * The spec's default expression as the nearest safe set; any other as written. With TLS 1.0 or
 * 1.1 enabled (`legacy`) that is node's default list instead, whose CBC suites those versions
 * need (they have no AEAD suite).
 */
export function mappedCiphers(expr: string, legacy = false): string {
  if (expr !== SPEC_DEFAULT_CIPHERS) return expr;
  return legacy ? tls.DEFAULT_CIPHERS : SAFE_TLS12;
}

/**
 * The cipher expression to hand OpenSSL (the spec's default mapped, above). TLS 1.0/1.1 need
 * security level 0 in OpenSSL 3 (their handshake signs with SHA-1/MD5), so enabling them lowers
 * it for this socket only.
 */
function cipherString(o: HttpsOptions): string {
  let c = mappedCiphers(o.ciphersuite, o.enableTls10 || o.enableTls11);
  // `+kRSA` moves the suites without forward secrecy (static RSA key exchange) to the end
  // without adding any; with the server's order enforced they are chosen last. Every TLS 1.3
  // suite is forward-secret.
  if (o.forwardSecrecy) c += ':+kRSA';
  if (o.enableTls10 || o.enableTls11) c += ':@SECLEVEL=0';
  return c;
}

/** The node:tls options of valid https options (checkHttpsOptions found no issue). */
export function tlsServerOptions(o: HttpsOptions): TlsServerOptions {
  const r = versionRange(o);
  if ('flag' in r) throw new Error(`${r.flag}: ${r.message}`);
  // forwardSecrecy false: the suite comes from the client's ClientHello order.
  // No client-initiated renegotiation (TLS 1.2 and below): a client could make the server redo
  // the costly handshake at will (testssl.sh flags it as a DoS threat); none needs it.
  return { minVersion: r.min, maxVersion: r.max, ciphers: cipherString(o), honorCipherOrder: o.forwardSecrecy, secureOptions: constants.SSL_OP_NO_RENEGOTIATION };
}

/** What of a host's https options this build cannot honour, at `base` (`hosting[i].httpsOptions`). */
export function checkHttpsOptions(o: HttpsOptions, base: string): SettingIssue[] {
  const issues: SettingIssue[] = [];
  if (o.enableSsl30) {
    issues.push({ path: `${base}.enableSsl30`, message: 'SSL 3.0 is not available: OpenSSL 3 (node 20) is built without it; set false' });
  }
  const r = versionRange(o);
  if ('flag' in r) {
    issues.push({ path: `${base}.${r.flag}`, message: r.message });
    return issues;
  }
  try {
    tls.createSecureContext({ ciphers: cipherString(o), minVersion: r.min, maxVersion: r.max });
  } catch (err) {
    issues.push({ path: `${base}.ciphersuite`, message: `OpenSSL refuses "${o.ciphersuite}": ${(err as Error).message}` });
  }
  return issues;
}

/** Two hosts can share a TLS socket only with the same options (see the top of this file). */
export function sameTlsOptions(a: HttpsOptions, b: HttpsOptions): boolean {
  return a.ciphersuite === b.ciphersuite && a.forwardSecrecy === b.forwardSecrecy && a.enableSsl30 === b.enableSsl30
    && VERSIONS.every((v) => a[v.flag] === b[v.flag]);
}
