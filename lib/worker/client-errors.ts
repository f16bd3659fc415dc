// Requests the HTTP parser refuses never reach the pipeline; they get their 4xx/5xx here and the
// connection is closed, so nothing after a malformed message can be read as a new request
// (request smuggling through Content-Length / Transfer-Encoding disagreements).
import type { Socket } from 'node:net';
import { rawErrorResponse } from '../pipeline/respond.js';

interface ParserError extends Error { code?: string; rawPacket?: Buffer }

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The parser's one size limit covers the request line and the fields together. When the chunk
 * it choked on starts a request (`METHOD SP target`) and that request line is unfinished, or
 * longer than everything after it in the chunk, the URL is what is too long (414), not the
 * fields (431). The chunk is all node keeps (`rawPacket`); a request line trickled in over many
 * chunks still gets 431.
 */
function requestLineTooLong(raw: Buffer | undefined): boolean {
  if (raw === undefined) return false;
  const start = raw.toString('latin1', 0, 32);
  const space = start.indexOf(' ');
  if (space <= 0 || !TOKEN.test(start.slice(0, space))) return false;
  const first = start.charCodeAt(space + 1);
  // origin-form `/`, absolute-form `h`ttp(s), asterisk-form `*`; a target not sent yet counts too.
  if (!(Number.isNaN(first) || first === 47 || first === 104 || first === 72 || first === 42)) return false;
  const lineEnd = raw.indexOf(10 /* LF */);
  return lineEnd < 0 || lineEnd > raw.length - lineEnd;
}

export function statusForParserError(err: ParserError): number {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW': return requestLineTooLong(err.rawPacket) ? 414 : 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT': return 408;
    case 'HPE_INVALID_METHOD': {
      // A well-formed method token the parser does not know gets 501 (RFC 9110 15.6.2);
      // anything else on the request line is simply malformed.
      const raw = err.rawPacket?.toString('latin1', 0, 64) ?? '';
      const space = raw.indexOf(' ');
      return space > 0 && TOKEN.test(raw.slice(0, space)) ? 501 : 400;
    }
    default: return 400;
  }
}

export function onClientError(err: ParserError, socket: Socket): void {
  // A request timeout can strike while a body is still arriving and the origin has already
  // answered: writing a status line into that answer would corrupt it, so just cut.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(statusForParserError(err)));
  socket.destroySoon();
}
