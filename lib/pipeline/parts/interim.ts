// Interim (1xx) answers of the origin, passed on to the client as they arrive (RFC 9110 15.2):
// 103 Early Hints lets a browser preload while the edge still waits for the final answer, 102
// keeps a client from timing out. Never stored: they are not the answer. Hop-by-hop fields are
// dropped, the rest goes unchanged (Early Hints' Link fields as the origin wrote them).
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { endToEndResponseHeaders } from './hop-by-hop.js';
import { isH2 } from './h2.js';
import type { H2Response } from './h2-stream.js';
import type { Transaction } from './transaction.js';

/** node's own way to put bytes ahead of the head (what writeEarlyHints uses), kept in order with pipelined answers. */
interface RawWriter { _writeRaw(data: string, encoding: BufferEncoding): boolean }

/**
 * Sends one interim answer to the client of `tx`, if it can still take one: nothing of its final
 * answer is out, it is not a setting trace, and it speaks HTTP/1.1 or HTTP/2 (RFC 9110 15.2: never to an HTTP/1.0 client).
 * 100 is ours to send and 101 would switch protocols: neither is passed on.
 */
export function forwardInterim(tx: Transaction, status: number, fields: Record<string, string | string[]>): void {
  if (status < 102 || status > 199) return;
  const res = tx.res;
  // A traced request is answered by its 422 trace alone (setting-trace.ts catches the head and
  // body writes, not raw bytes).
  if (res.headersSent || res.destroyed || tx.trace !== undefined) return;
  const req = tx.req;
  const headers = endToEndResponseHeaders(fields);
  if (req.httpVersionMajor === 2 && isH2(req)) {
    const stream = (res as unknown as H2Response).stream;
    // node refuses what HTTP/2 cannot carry (a field name not in lower case cannot come from
    // undici); an interim answer is advisory, so one it refuses is dropped, not the stream.
    try { stream.additionalHeaders({ ...headers, ':status': status }); } catch { /* dropped */ }
    return;
  }
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor < 1) return;
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Informational'}\r\n`;
  for (const name in headers) {
    const v = headers[name]!;
    if (typeof v === 'string') head += `${name}: ${v}\r\n`;
    else for (const one of v) head += `${name}: ${one}\r\n`;
  }
  (res as ServerResponse as unknown as RawWriter)._writeRaw(`${head}\r\n`, 'latin1');
}
