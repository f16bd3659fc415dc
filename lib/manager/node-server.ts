// Both management ports (plain and TLS) on node's own HTTP stack, the stack of the data plane.
// This module only adapts node's request and response to the Dispatcher's RawRequest and
// ApiReply; access control, routing and envelopes are the Dispatcher's.
//
// Decision: the plain port ran on hyper-express (uWebSockets.js) until the move to Node 24. No
// uWebSockets.js build on the npm registry loads on Node 24 with Debian 12's glibc, and the TLS
// port already ran here because uWS cannot set TLS protocol versions or the cipher order. One
// stack means one set of parsing limits, one set of timeouts and one place to fix.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, fail, HTTP } from './envelope.js';
import type { Dispatcher } from './router.js';

/** Bodies above this are refused with 413 (setting packages are the largest uploads). */
export const MAX_BODY = 64 * 1024 * 1024;

function tooLarge(): ApiError {
  return new ApiError(HTTP.payloadTooLarge, `Payload Too Large: request body over ${MAX_BODY} bytes`);
}

/** The whole body; a body over MAX_BODY rejects with a 413 ApiError (the connection then closes). */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY) {
      res.shouldKeepAlive = false;
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) { chunks.push(c); return; }
      res.shouldKeepAlive = false;
      req.pause();
      reject(tooLarge());
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Node joins repeated fields except set-cookie; the API reads every field as one string. */
function headersOf(req: IncomingMessage): Record<string, string> {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
  return h;
}

/** The request listener of both ports. */
export function apiListener(dispatcher: Dispatcher, version: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    dispatcher
      .handle({
        method: (req.method ?? 'GET').toUpperCase(),
        rawPath: path,
        rawQuery: q < 0 ? '' : url.slice(q + 1),
        headers: headersOf(req),
        remoteAddress: req.socket.remoteAddress ?? '',
        body: () => readBody(req, res),
      })
      .then((reply) => {
        if (res.headersSent || res.destroyed) return;
        res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) });
        res.end(reply.body);
      })
      .catch((err: unknown) => {
        // The dispatcher answers every handler error itself; this is a failure to write the answer.
        if (res.headersSent || res.destroyed) { res.destroy(); return; }
        const reply = fail(HTTP.internalError, version, path, 'query', `Internal error: ${(err as Error).message}`);
        res.writeHead(reply.status, reply.headers);
        res.end(reply.body);
      });
  };
}
