// HTTP/2 streams through the same stages as HTTP/1. node's compatibility layer gives each stream
// a request/response pair shaped like node:http's (Http2ServerRequest/Http2ServerResponse);
// these subclasses fill in what the stages rely on and the layer lacks: the transaction and the
// time to first byte (as TxResponse does), `destroyed`, byte counts per stream (node counts
// bytes per connection only, and one HTTP/2 connection carries many transactions at once), and
// answers without connection-specific fields (RFC 9113 8.2.2: node refuses to send them).
// HTTP/1 requests never reach this module: receive and finish branch on the version once.
import { Http2ServerRequest, Http2ServerResponse, constants, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TransactionRecord } from './transaction.js';
import { editOutgoing } from './header-edits.js';
import { setAnswerFields } from './answer-fields.js';
import { serviceStatus } from './fallback.js';
import { withCacheStatus } from './cache-status.js';

/** Fields that describe one HTTP/1 connection: an HTTP/2 message must not carry them. */
const CONNECTION_FIELDS = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'http2-settings'];

export class TxH2Request extends Http2ServerRequest {
  /** Body bytes received on the stream (DATA payload), counted as node hands them to the request. */
  bodyBytes = 0;

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null && chunk !== undefined) this.bodyBytes += (chunk as Buffer).length;
    return super.push(chunk, encoding);
  }
}

export class TxH2Response extends Http2ServerResponse<TxH2Request> {
  tx: TransactionRecord | undefined = undefined;
  /** Body bytes handed to the stream while it was open (DATA payload, frames not counted). */
  bodyBytes = 0;

  constructor(stream: ServerHttp2Stream) {
    super(stream);
    // The layer emits the response's 'close' for a HEAD request only after end() was called
    // (it compares the request kind at end() with the stream's): a HEAD stream the client resets
    // before the answer would never close, and its transaction would never finish.
    if ((stream as ServerHttp2Stream & { headRequest?: boolean }).headRequest === true) stream.once('close', () => { if (!this.closeSeen) this.emit('close'); });
    this.once('close', () => { this.closeSeen = true; });
  }

  private closeSeen = false;

  /** Like a ServerResponse's: the stream is gone (answered and closed, reset, or destroyed). */
  // @ts-expect-error typed as Writable's data property; here it reads the stream's state.
  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  override writeHead(statusCode: number, reason?: string | OutgoingHttpHeaders | readonly string[], headers?: OutgoingHttpHeaders | readonly string[]): this {
    const tx = this.tx;
    tx?.answerStarts();
    setAnswerFields(this, tx);
    // HTTP/2 has no reason phrase (node warns about one once per process).
    if (tx?.fallback !== undefined) statusCode = serviceStatus(tx, statusCode);
    let fields: OutgoingHttpHeaders | readonly string[] | undefined = typeof reason === 'object' ? reason : headers;
    if (tx?.host !== undefined) fields = withCacheStatus(tx, fields);
    if (tx?.responseEdits !== undefined) fields = editOutgoing(this, fields, tx.responseEdits);
    if (fields !== undefined && !isFlat(fields)) {
      for (const name of CONNECTION_FIELDS) if (fields[name] !== undefined) delete fields[name];
    }
    try {
      return super.writeHead(statusCode, fields);
    } catch {
      // A head HTTP/2 cannot carry (node refuses it: an invalid field, a late second head): the
      // stream is reset rather than the error thrown into the stage that answered.
      if (tx !== undefined) tx.aborted = true;
      this.stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      return this;
    }
  }

  /**
   * A stage cuts an answer short (an origin body broke, a file failed): HTTP/1 cuts the
   * connection; here the stream is reset with INTERNAL_ERROR. (node would send NO_ERROR for a
   * destroy without an error, which a client may take for a complete answer without a length.)
   */
  override destroy(err?: Error): this {
    super.destroy(err ?? new Error('answer cut short'));
    return this;
  }

  override write(chunk: unknown, encoding?: unknown, cb?: unknown): boolean {
    // end(chunk) writes through here too.
    if (!this.stream.destroyed && !this.writableEnded && chunk !== null && chunk !== undefined) {
      this.bodyBytes += typeof chunk === 'string' ? Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8')
        : (chunk as Uint8Array).byteLength;
    }
    return (super.write as (c: unknown, e?: unknown, f?: unknown) => boolean)(chunk, encoding, cb);
  }
}

/** An HTTP/2 stream's request: the compatibility layer's, not an HTTP/1 message claiming 2.0. */
export function isH2(req: IncomingMessage): boolean {
  return req instanceof Http2ServerRequest;
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
  const stream = (req as unknown as Http2ServerRequest).stream;
  return { bytes, fieldCount: fields, host, hasContent: !stream.endAfterHeaders };
}

/**
 * After an error answer that HTTP/1 would follow with closing the connection (a body left
 * unread): HTTP/2 ends only this stream, and only if the client is still sending. RFC 9113 8.1:
 * RST_STREAM NO_ERROR once the complete answer (END_STREAM) is out. It must not be sent sooner:
 * nghttp2 drops the stream's queued frames on a reset, and the client loses the end of the
 * answer (curl then reports an empty reply). node writes a stream's frames on the next
 * immediate after its writable side finishes; the reset waits one more.
 */
export function closeStreamAfterAnswer(res: ServerResponse): void {
  const stream = (res as unknown as Http2ServerResponse).stream;
  if (stream.destroyed || stream.closed || stream.endAfterHeaders || stream.state.remoteClose === 1) return;
  const reset = (): void => {
    setImmediate(() => { if (!stream.destroyed && !stream.closed) stream.close(constants.NGHTTP2_NO_ERROR); });
  };
  if (stream.writableFinished) reset();
  else stream.once('finish', reset);
}

/** Bytes of a head as HTTP/1 text: `HTTP/2 200` CRLF, `name: value` CRLF per field, CRLF. */
function headTextBytes(fields: OutgoingHttpHeaders): number {
  let n = 2;
  for (const name in fields) {
    if (name === ':status') { n += 12; continue; }
    const v = fields[name];
    if (Array.isArray(v)) for (const x of v) n += name.length + String(x).length + 4;
    else if (v !== undefined) n += name.length + String(v).length + 4;
  }
  return n;
}

/**
 * finish for a stream: the byte fields of the record from the stream's own counts (HPACK and
 * frame headers are not counted; the head is measured as HTTP/1 text). Returns the bytes sent.
 */
export function h2Bytes(tx: TransactionRecord): number {
  const req = tx.req as unknown as TxH2Request;
  const res = tx.res as unknown as TxH2Response;
  tx.requestBodyBytes = req.bodyBytes ?? 0;
  tx.responseHeadBytes = res.headersSent ? headTextBytes(res.stream.sentHeaders) : 0;
  tx.responseBodyBytes = res.bodyBytes ?? 0;
  return tx.responseHeadBytes + tx.responseBodyBytes;
}

/** Request body bytes received so far (upload rate): per stream, not per connection. */
export function h2BodyBytesIn(req: IncomingMessage): number {
  return (req as unknown as TxH2Request).bodyBytes ?? 0;
}

/** node's other form of a head: a flat [name, value, ...] list. */
function isFlat(fields: OutgoingHttpHeaders | readonly string[]): fields is readonly string[] {
  return Array.isArray(fields);
}
