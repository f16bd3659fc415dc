// HTTP/2 streams through the same stages as HTTP/1: the request and response objects are ours,
// built on node's stream API (h2-stream.ts); these are the few places where a stage asks what
// differs: whether a request is a stream's, its head's shape, its body, its byte counts, and how
// an error answer ends the stream rather than the connection. HTTP/1 requests never reach this
// module: receive and finish branch on the version once.
import { constants, type IncomingHttpHeaders } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { TransactionRecord } from './transaction.js';
import { H2Request, type H2Response } from './h2-stream.js';

/** An HTTP/2 stream's request, not an HTTP/1 message claiming 2.0. */
export function isH2(req: IncomingMessage): boolean {
  return (req as unknown) instanceof H2Request;
}

/** The request's body as a stream: an HTTP/1 message is its own, an HTTP/2 request's is the stream's readable side. */
export function requestBody(req: IncomingMessage): Readable {
  return isH2(req) ? (req as unknown as H2Request).stream : req;
}

/** Content follows the stream's head (its HEADERS frame did not end the stream). */
export function h2HasBody(req: IncomingMessage): boolean {
  return !(req as unknown as H2Request).stream.endAfterHeaders;
}

export interface H2Head {
  /** Header fields as HTTP/1 text would be (`name: value` CRLF), pseudo-headers left out. */
  bytes: number;
  fieldCount: number;
  /** The host the request names: `:authority`, else its Host field; null when they differ. */
  host: string | undefined | null;
  /** Content follows the head (the HEADERS frame did not end the stream). */
  hasContent: boolean;
}

/**
 * The request head of a stream, for the same checks as an HTTP/1 head. The pseudo-headers are
 * the request line, not fields. RFC 9113 8.3.1: `:authority` is the host; a Host field naming
 * another one makes the request malformed. The Host field is filled in from `:authority`, so
 * every later reader (the logs, invalidation targets) finds the host where HTTP/1 puts it.
 * The answer is shared by every call: read it before the next request can run.
 */
export function h2Head(req: IncomingMessage): H2Head {
  const raw = req.rawHeaders;
  let bytes = 0;
  let fields = 0;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.charCodeAt(0) === 58) continue;
    fields++;
    bytes += name.length + raw[i + 1]!.length + 4;
    if (name === 'host') hosts++;
  }
  const headers = req.headers as IncomingHttpHeaders;
  const authority = headers[':authority'];
  let host: string | undefined | null = headers.host;
  if (hosts > 1) host = null;
  else if (typeof authority === 'string' && authority !== '') {
    if (host === undefined) headers.host = host = authority;
    else if (host.toLowerCase() !== authority.toLowerCase()) host = null;
  }
  head.bytes = bytes;
  head.fieldCount = fields;
  head.host = host;
  head.hasContent = h2HasBody(req);
  return head;
}

/** h2Head's answer: one object, read by its caller before anything else can run (no object per request). */
const head: H2Head = { bytes: 0, fieldCount: 0, host: undefined, hasContent: false };

/**
 * After an error answer that HTTP/1 would follow with closing the connection (a body left
 * unread): HTTP/2 ends only this stream, and only if the client is still sending. RFC 9113 8.1:
 * RST_STREAM NO_ERROR once the complete answer (END_STREAM) is out. It must not be sent sooner:
 * nghttp2 drops the stream's queued frames on a reset, and the client loses the end of the
 * answer (curl then reports an empty reply). node writes a stream's frames on the next
 * immediate after its writable side finishes; the reset waits one more.
 */
export function closeStreamAfterAnswer(res: ServerResponse): void {
  const stream = (res as unknown as H2Response).stream;
  if (stream.destroyed || stream.closed || stream.endAfterHeaders || stream.state.remoteClose === 1) return;
  const reset = (): void => {
    setImmediate(() => { if (!stream.destroyed && !stream.closed) stream.close(constants.NGHTTP2_NO_ERROR); });
  };
  if (stream.writableFinished) reset();
  else stream.once('finish', reset);
}

/**
 * finish for a stream: the byte fields of the record from the stream's own counts (HPACK and
 * frame headers are not counted; the head is measured as HTTP/1 text). Returns the bytes sent.
 */
export function h2Bytes(tx: TransactionRecord): number {
  const res = tx.res as unknown as H2Response;
  tx.requestBodyBytes = res.req.bodyBytes;
  tx.responseHeadBytes = res.headBytes;
  tx.responseBodyBytes = res.bodyBytes;
  return tx.responseHeadBytes + tx.responseBodyBytes;
}

/** Request body bytes received so far (upload rate): per stream, not per connection. */
export function h2BodyBytesIn(req: IncomingMessage): number {
  return (req as unknown as H2Request).bodyBytes;
}
