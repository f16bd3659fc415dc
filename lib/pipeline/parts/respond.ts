// Short, complete error answers: every one has a Content-Length and a body a person can read,
// so a client never waits for more.
import type { ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import { closeStreamAfterAnswer, isH2 } from './h2.js';

const bodies = new Map<number, Buffer>();

function bodyOf(status: number): Buffer {
  let b = bodies.get(status);
  if (b === undefined) bodies.set(status, (b = Buffer.from(`${status} ${STATUS_CODES[status] ?? 'Error'}\n`)));
  return b;
}

/** `text`: a body saying more than the status line (default: `<status> <reason>`). */
export function sendError(res: ServerResponse, status: number, extra?: Record<string, string>, close = false, text?: string): void {
  if (res.headersSent) {
    // Too late to change the status: cut the connection so the client sees an incomplete body.
    res.destroy();
    return;
  }
  const body = text === undefined ? bodyOf(status) : Buffer.from(text);
  const headers: Record<string, string | number> = {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': body.length,
    'cache-control': 'no-store',
    ...extra,
  };
  // HTTP/2 has no Connection field: the stream is closed instead, the connection goes on.
  const h2 = close && isH2(res.req);
  if (close && !h2) headers.connection = 'close';
  res.writeHead(status, headers);
  res.end(res.req.method === 'HEAD' ? undefined : body);
  if (h2) closeStreamAfterAnswer(res);
}

/** Raw answer for requests the parser refused: the socket has no ServerResponse. */
export function rawErrorResponse(status: number, extra?: Record<string, string>): string {
  const body = bodyOf(status);
  let fields = '';
  if (extra !== undefined) for (const k in extra) fields += `${k}: ${extra[k]}\r\n`;
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\n${fields}` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString()}`;
}
