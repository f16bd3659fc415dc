// Requests the HTTP parser refuses never reach the pipeline; they get their 4xx/5xx here and the
// connection is closed, so nothing after a malformed message can be read as a new request
// (request smuggling through Content-Length / Transfer-Encoding disagreements).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { rawErrorResponse } from '../pipeline/parts/respond.js';
import { markConnectionClosing } from '../pipeline/parts/tx-response.js';

interface ParserError extends Error { code?: string; rawPacket?: Buffer; bytesParsed?: number }

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The answers a connection still owes, in request order. Nearly always none or one (HTTP/1.1
 * pipelining is rare), so the first is kept in a field and only the rest in an array made on
 * demand: a Set here allocated a new hash table on every request, when its delete shrank it.
 */
export class OwedAnswers {
  private first: ServerResponse | undefined = undefined;
  private rest: ServerResponse[] | undefined = undefined;
  size = 0;

  add(res: ServerResponse): void {
    if (this.size === 0) this.first = res;
    else (this.rest ??= []).push(res);
    this.size++;
  }

  delete(res: ServerResponse): void {
    if (this.size === 0) return;
    if (this.first === res) {
      this.first = this.size > 1 ? this.rest!.shift() : undefined;
      this.size--;
      return;
    }
    const i = this.rest?.indexOf(res) ?? -1;
    if (i < 0) return;
    this.rest!.splice(i, 1);
    this.size--;
  }

  *[Symbol.iterator](): Iterator<ServerResponse> {
    if (this.size === 0) return;
    yield this.first!;
    if (this.rest !== undefined) yield* this.rest;
  }
}

/**
 * What the server tracks of one connection for a refusal: the answers not written yet. node
 * writes pipelined answers in order, so a refusal written before they are done would take the
 * place of answers to requests the origin has already executed.
 */
export interface ConnectionAnswers {
  pending: OwedAnswers;
  /** Called by the server each time an answer of the connection is done (or abandoned). */
  onAnswered: (() => void) | undefined;
  /** The refusal is written or waiting; the parser repeats its error for every later chunk. */
  refused: boolean;
}

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

/**
 * The line of the chunk the parser stopped in (`bytesParsed`). The chunk can begin with requests
 * already parsed (pipelining): its first line is not the one that failed.
 */
function lineAt(raw: Buffer | undefined, at: number | undefined): string {
  if (raw === undefined) return '';
  const pos = Math.min(Math.max(at ?? 0, 0), raw.length);
  const start = pos === 0 ? 0 : raw.lastIndexOf(10 /* LF */, pos - 1) + 1;
  return raw.toString('latin1', start, Math.min(raw.length, start + 64));
}

export function statusForParserError(err: ParserError): number {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW': return requestLineTooLong(err.rawPacket) ? 414 : 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT': return 408;
    case 'HPE_INVALID_METHOD': {
      // A well-formed method token the parser does not know gets 501 (RFC 9110 15.6.2);
      // anything else on the request line is simply malformed.
      const line = lineAt(err.rawPacket, err.bytesParsed);
      const space = line.indexOf(' ');
      return space > 0 && TOKEN.test(line.slice(0, space)) ? 501 : 400;
    }
    default: return 400;
  }
}

/**
 * `METHOD SP target` then the line end, with no HTTP-version: an HTTP/0.9 request line. llhttp
 * accepts it and then waits for header fields a 0.9 client never sends.
 */
export function versionlessRequestLine(chunk: Buffer): boolean {
  const lf = chunk.indexOf(10 /* LF */);
  if (lf <= 0) return false;
  const line = chunk.toString('latin1', 0, chunk[lf - 1] === 13 ? lf - 1 : lf);
  const space = line.indexOf(' ');
  return space > 0 && TOKEN.test(line.slice(0, space)) && !line.includes(' ', space + 1) && space + 1 < line.length;
}

const FIRST_BYTES_SEEN = Symbol('first bytes seen');
type SeenSocket = Socket & { [FIRST_BYTES_SEEN]?: true };

/**
 * The connection's first bytes were looked at before the HTTP/1 parser got them (h2c reads them
 * to tell HTTP/2 from HTTP/1): they reach the parser through 'data', so the parser's first chunk
 * of its own (service-server.ts) is not the connection's first.
 */
export function markFirstBytesSeen(socket: Socket): void {
  (socket as SeenSocket)[FIRST_BYTES_SEEN] = true;
}

export function firstBytesSeen(socket: Socket): boolean {
  return (socket as SeenSocket)[FIRST_BYTES_SEEN] === true;
}

/**
 * The first line of `chunk` (a request line) has two SP in a row. RFC 9112 3: its parts are
 * separated by exactly one; llhttp skips any number before the target and before the version
 * (nothing else in a line it accepts is a space), and a line that two parties split differently
 * is a way past a filter in front of us. Reads up to the line's end or the chunk's.
 */
export function spacedRequestLine(chunk: Buffer): boolean {
  for (let i = 1; i < chunk.length; i++) {
    const c = chunk[i];
    if (c === 10 /* LF */) return false;
    if (c === 32 && chunk[i - 1] === 32) return true;
  }
  return false;
}

/**
 * What is known of a refused request, for the access log (the worker routes it to a host's):
 * `head` the bytes the parser stopped in, from the refused request's start; `req` the request
 * when its head had been parsed.
 */
export interface Refusal { socket: Socket; status: number; answer: string; head: Buffer | undefined; req: IncomingMessage | undefined }

let refusals: ((r: Refusal) => void) | undefined;

/** Where refusals are reported (the worker's access logs); undefined: nowhere. */
export function setRefusalSink(sink: ((r: Refusal) => void) | undefined): void {
  refusals = sink;
}

/** The raw answer for a connection the server gives up on, then the close. */
export function refuseConnection(socket: Socket, status: number, head?: Buffer, req?: IncomingMessage): void {
  // The parser may still be alive (an HTTP/0.9 line): what it reads from here on is not served.
  markConnectionClosing(socket);
  const answer = rawErrorResponse(status);
  socket.end(answer);
  socket.destroySoon();
  try {
    refusals?.({ socket, status, answer, head, req });
  } catch {
    // A log line that cannot be made never stands in the way of the refusal.
  }
}

/**
 * The bytes of `raw` from the start of the request the parser stopped in (at `at`): the chunk's
 * start, or, when requests before it ended in the same chunk (pipelining), after the last blank
 * line (the end of a head) before that point.
 */
function fromFailedLine(raw: Buffer | undefined, at: number | undefined): Buffer | undefined {
  if (raw === undefined) return undefined;
  const pos = Math.min(Math.max(at ?? 0, 0), raw.length);
  const blank = raw.lastIndexOf('\r\n\r\n', Math.max(pos - 1, 0));
  return raw.subarray(blank < 0 ? 0 : blank + 4);
}

export function onClientError(err: ParserError, socket: Socket, conn?: ConnectionAnswers): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  if (conn?.refused === true) return;
  const status = statusForParserError(err);
  const pending = conn?.pending ?? new OwedAnswers();
  // The request the parser choked on, when its head had been read: a body that turned out
  // malformed, or a request timeout while it arrives. The refusal is its answer.
  let broken: ServerResponse | undefined;
  for (const res of pending) if (!res.req.complete) broken = res;
  const earlierDone = (): boolean => {
    for (const res of pending) if (res !== broken) return false;
    return true;
  };
  const refuse = (): void => {
    if (conn !== undefined) conn.onAnswered = undefined;
    // Its answer has started (an origin may answer before the body is in): a status line written
    // into it would corrupt it, so just cut.
    if (broken?.headersSent === true || !socket.writable) {
      socket.destroy();
      return;
    }
    refuseConnection(socket, status, broken === undefined ? fromFailedLine(err.rawPacket, err.bytesParsed) : undefined, broken?.req);
  };
  if (conn !== undefined) conn.refused = true;
  if (conn === undefined || earlierDone()) {
    refuse();
    return;
  }
  // Complete requests before the bad one were executed: their answers go first, in order.
  conn.onAnswered = () => { if (earlierDone()) refuse(); };
}
