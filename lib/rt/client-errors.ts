// Requests the HTTP parser refuses never reach the pipeline; they get their 4xx/5xx here and the
// connection is closed, so nothing after a malformed message can be read as a new request
// (request smuggling through Content-Length / Transfer-Encoding disagreements).
import type { Socket } from 'node:net';
import { rawErrorResponse } from './respond.js';

interface ParserError extends Error { code?: string; rawPacket?: Buffer }

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function statusForParserError(err: ParserError): number {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW': return 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT': return 408;
    case 'HPE_INVALID_METHOD': {
      // A well-formed method token the parser does not know is "not implemented" (RFC 9110 15.6.2);
      // anything else on the request line is simply malformed.
      const raw = err.rawPacket?.toString('latin1', 0, 64) ?? '';
      const space = raw.indexOf(' ');
      return space > 0 && TOKEN.test(raw.slice(0, space)) ? 501 : 400;
    }
    default: return 400;
  }
}

export function onClientError(err: ParserError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(statusForParserError(err)));
  socket.destroySoon();
}
