// The TLS management port (`env.management.api.https`).
//
// Decision: it is served by node:https, not by hyper-express. uWebSockets.js takes only
// key/cert/ca/passphrase/dh-params file names and an `ssl_ciphers` string; it has no way to set
// the minimum and maximum protocol versions or to enforce the server's cipher order, so
// `minVersion`, `maxVersion` and `forwardSecrecy` could not be honoured there. Both ports hand
// their requests to the same Dispatcher, so the route handlers are shared.
import fs from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import tls, { type SecureVersion } from 'node:tls';
import type { ManagementApi } from '../setting/types.js';
import type { Dispatcher } from './router.js';

export type ApiHttps = NonNullable<ManagementApi['https']>;

/** Bodies above this are refused with 413 (setting packages are the largest uploads). */
export const MAX_BODY = 64 * 1024 * 1024;

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

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        req.destroy();
        reject(new Error(`request body over ${MAX_BODY} bytes`));
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
  return h;
}

export function createTlsServer(options: tls.TlsOptions, dispatcher: Dispatcher): https.Server {
  return https.createServer(options, (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    dispatcher
      .handle({
        method: (req.method ?? 'GET').toUpperCase(),
        rawPath: q < 0 ? url : url.slice(0, q),
        rawQuery: q < 0 ? '' : url.slice(q + 1),
        headers: headersOf(req),
        remoteAddress: req.socket.remoteAddress ?? '',
        body: () => readBody(req),
      })
      .then((reply) => {
        res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) });
        res.end(reply.body);
      })
      .catch(() => {
        // The dispatcher answers every error itself; this is a failure to write the answer.
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
}
