// The TLS management port (`env.management.api.https`).
//
// node:https with the setting's protocol versions and cipher order; the request listener is the
// plain port's (node-server.ts), so both ports share parsing, limits and the Dispatcher.
import fs from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import tls, { type SecureVersion } from 'node:tls';
import type { ManagementApi } from '../setting/types.js';
import { apiListener } from './node-server.js';
import type { Dispatcher } from './router.js';

export type ApiHttps = NonNullable<ManagementApi['https']>;

async function readPem(file: string, home: string, what: string): Promise<Buffer> {
  const p = path.resolve(home, file);
  try {
    return await fs.readFile(p);
  } catch (err) {
    throw new Error(`management TLS: cannot read ${what} file ${p}: ${(err as Error).message}`);
  }
}

/** Server options from the setting; relative file paths resolve against env.home. */
export async function tlsOptions(h: ApiHttps, home: string): Promise<tls.SecureContextOptions & tls.TlsOptions> {
  const [cert, key, ca] = await Promise.all([
    readPem(h.cert, home, 'cert'),
    readPem(h.key, home, 'key'),
    h.ca ? readPem(h.ca, home, 'ca') : Promise.resolve(undefined),
  ]);
  const o = h.options;
  const options: tls.SecureContextOptions & tls.TlsOptions = {
    cert,
    key,
    ...(ca ? { ca } : {}),
    minVersion: o.minVersion as SecureVersion,
    maxVersion: o.maxVersion as SecureVersion,
    // `+kRSA` moves the suites without forward secrecy (static RSA key exchange) to the end of
    // the list without adding any; with the server order enforced they are chosen last.
    // (Every TLS 1.3 suite is forward-secret.)
    ciphers: o.forwardSecrecy ? `${o.ciphersuite}:+kRSA` : o.ciphersuite,
    honorCipherOrder: o.forwardSecrecy,
  };
  try {
    tls.createSecureContext(options);
  } catch (err) {
    throw new Error(`management TLS: bad certificate, key or options (ciphersuite "${o.ciphersuite}"): ${(err as Error).message}`);
  }
  return options;
}

export function createTlsServer(options: tls.TlsOptions, dispatcher: Dispatcher, version: string): https.Server {
  return https.createServer(options, apiListener(dispatcher, version));
}
