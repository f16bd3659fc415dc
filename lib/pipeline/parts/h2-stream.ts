// An HTTP/2 stream as the pipeline's request and response, on node's stream API. The stages are
// written against node:http's IncomingMessage and ServerResponse; node's compatibility layer
// (Http2ServerRequest/Http2ServerResponse) gives a stream that shape, but builds a Readable, a
// header map and a copy of every head per stream, registers a dozen listeners, and ends every
// answer through a trailers round trip. These two classes are the part of that surface the
// stages use, and no more (docs/pipeline.md, "HTTP/2"):
// - H2Request: the request head as node parsed it, the connection's socket, `complete`; its body
//   is the stream itself (requestBody in h2.ts), whose DATA bytes are counted as node pushes them.
// - H2Response: writeHead builds the final header block at once (the fields a stage gives, those
//   set before, Cache-Status, answer fields and edits; RFC 9113 8.2.2 connection-specific fields
//   left out) and it goes out with the first body byte or the end, as node:http's head does (an
//   empty answer is one HEADERS frame with END_STREAM); write/end with back-pressure and
//   'drain'; 'finish' and 'close' once the stream closes, however it closes; per-stream byte
//   counts for the record (node counts per connection, and a connection carries many streams).
// One 'close' and one 'error' listener per stream, both shared functions that find the response
// on the stream: nothing else is allocated per stream beyond the two objects. H2Response is an
// EventEmitter whose listener table is made by the first listener (EventEmitter's methods make
// it when missing, as for emitters built without its constructor): a hit's answer has none, the
// transaction's end is a hook (onEnded), and the table of an emitter made by its constructor
// cost about 100 bytes per stream, held until the stream is collected.
import { EventEmitter } from 'node:events';
import { validateHeaderName, validateHeaderValue, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { constants, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { TransactionRecord } from './transaction.js';
import { answerFields, answerStatus, type AnswerFields } from './answer-head.js';

/** The connection a stream came on: told when the stream has closed (its open streams, idle time). */
export interface StreamOwner {
  streamClosed(): void;
}

const RES = Symbol('h2 response');
interface TxStream extends ServerHttp2Stream {
  [RES]?: H2Response;
  readonly _readableState: { ended: boolean };
}

/** Fields that describe one HTTP/1 connection: an HTTP/2 message must not carry them. */
const CONNECTION_FIELDS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'http2-settings']);

/** Only names of those lengths are looked up (a hit's head has a dozen fields, few of them that long). */
function connectionField(name: string): boolean {
  const n = name.length;
  return (n === 2 || n === 7 || n === 10 || n === 14 || n === 16 || n === 17) && CONNECTION_FIELDS.has(name.toLowerCase());
}

/** `date: <IMF-fixdate>` CRLF as HTTP/1 text: node adds it to a head that has none. */
const DATE_BYTES = 37;
/** `HTTP/2 200` CRLF, and the CRLF that ends the head. */
const STATUS_LINE_BYTES = 14;

type FieldValue = OutgoingHttpHeader;
type Fields = OutgoingHttpHeaders | readonly OutgoingHttpHeader[] | readonly unknown[];
type WriteCallback = (err?: Error | null) => void;

const END_STREAM = Object.freeze({ endStream: true });

export class H2Request {
  /** DATA payload received on the stream, counted as node pushes it (requestBody). */
  bodyBytes = 0;

  constructor(readonly stream: ServerHttp2Stream, readonly headers: IncomingHttpHeaders, readonly rawHeaders: string[],
    readonly socket: Socket) {}

  // Read from the head when asked, as the record reads the request (no copies per stream).
  /**
   * Says "an HTTP/2 stream" to modules that cannot import this one (transaction.ts, which this
   * module's imports read): an HTTP/1 request line claiming HTTP/2.0 has no such field.
   */
  get h2Stream(): true { return true; }
  get method(): string { return this.headers[':method'] ?? ''; }
  /** `:path`; none for CONNECT. */
  get url(): string | undefined { return this.headers[':path']; }
  get httpVersion(): string { return '2.0'; }
  get httpVersionMajor(): number { return 2; }
  get httpVersionMinor(): number { return 0; }

  /** The client ended its side (END_STREAM), or the stream is gone: no more body will come. */
  get complete(): boolean {
    return (this.stream as TxStream)._readableState.ended || this.stream.destroyed;
  }

  /** The body was read to its end. */
  get readableEnded(): boolean {
    return this.stream.readableEnded;
  }
}

// The EventEmitter side of H2Response (its prototype is EventEmitter's, see below).
export interface H2Response extends EventEmitter {}

export class H2Response {
  // EventEmitter's own fields (_events, _eventsCount, _maxListeners) are its prototype's until
  // the first listener sets them.
  tx: TransactionRecord | undefined = undefined;
  /** Runs when the stream has closed, before the 'close' listeners: the transaction's finish (steps.ts). */
  onEnded: ((res: H2Response) => void) | undefined = undefined;
  statusCode = 200;
  /** writeHead ran: the status can no longer change (the head goes out with the first write). */
  headersSent = false;
  writableEnded = false;
  /** The head as HTTP/1 text would be (`HTTP/2 200`, `name: value` lines), once it went out. */
  headBytes = 0;
  /** Body bytes handed to the stream (DATA payload, frames not counted). */
  bodyBytes = 0;
  /** What setHeader set (lower-case names), until writeHead. */
  private fields: Record<string, FieldValue> | undefined = undefined;
  /** The header block writeHead made, until the first write or the end sends it. */
  private head: unknown[] | undefined = undefined;
  private headTextBytes = 0;
  private drainWatched = false;

  constructor(readonly stream: ServerHttp2Stream, readonly req: H2Request, private readonly owner: StreamOwner) {
    const s = stream as TxStream;
    s[RES] = this;
    s.on('close', onStreamClose);
    s.on('error', onStreamError);
    if (!stream.endAfterHeaders) {
      // What node pushed before the stream was handed to us is in its buffer still.
      req.bodyBytes = stream.readableLength;
      stream.push = countedPush;
    }
  }

  /** The stream is gone: answered and closed, reset, or destroyed. */
  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  /** The whole answer was handed to the stream and its end went out. */
  get writableFinished(): boolean {
    return this.writableEnded && this.stream.writableFinished;
  }

  get socket(): Socket {
    return this.req.socket;
  }

  writeHead(statusCode: number, reason?: string | Fields, headers?: Fields): this {
    const tx = this.tx;
    tx?.answerStarts();
    if (this.headersSent) {
      // A second head: HTTP/2 cannot carry one after the first. The stream is reset rather than
      // the error thrown into the stage that answered.
      this.reset();
      return this;
    }
    // HTTP/2 has no reason phrase.
    const fields = answerFields(this, tx, (typeof reason === 'object' ? reason : headers) as AnswerFields);
    statusCode = answerStatus(tx, statusCode);
    // Throws as node:http's writeHead does on a field no message may carry.
    this.head = this.block(statusCode, fields);
    this.statusCode = statusCode;
    this.headersSent = true;
    return this;
  }

  /**
   * The header block as node's respond() takes it: [':status', code, name, value ...], the
   * fields set before writeHead first (writeHead's own replace those of the same name). A flat
   * list is a hit's prepared head (stored-view.ts), shared and rewritten by the next hit: it is
   * copied here, its values as the origin sent them and node's parser checked them; fields given
   * as an object are checked as node:http checks them.
   */
  private block(status: number, fields: OutgoingHttpHeaders | readonly OutgoingHttpHeader[] | undefined): unknown[] {
    if (this.fields === undefined && Array.isArray(fields)) return this.listBlock(status, fields);
    const out: unknown[] = [':status', status];
    let bytes = STATUS_LINE_BYTES;
    let date = false;
    const set = this.fields;
    if (set !== undefined) {
      for (const name in set) {
        if (fields !== undefined && hasField(fields, name)) continue;
        if (connectionField(name)) continue;
        bytes += pushField(out, name, set[name]!);
        if (name === 'date') date = true;
      }
    }
    if (Array.isArray(fields)) {
      for (let i = 0; i + 1 < fields.length; i += 2) {
        const name = String(fields[i]);
        const value = fields[i + 1] as FieldValue | undefined;
        if (value === undefined || connectionField(name)) continue;
        bytes += pushField(out, name, value);
        if (name.length === 4 && name.toLowerCase() === 'date') date = true;
      }
    } else if (fields !== undefined) {
      const o = fields as OutgoingHttpHeaders;
      for (const name in o) {
        const value = o[name];
        if (value === undefined || connectionField(name)) continue;
        validateHeaderName(name);
        validateHeaderValue(name, value as string);
        bytes += pushField(out, name, value);
        if (name.length === 4 && name.toLowerCase() === 'date') date = true;
      }
    }
    this.headTextBytes = date ? bytes : bytes + DATE_BYTES;
    return out;
  }

  /**
   * block() for a flat list and nothing set before (a hit's head): the array is made at its
   * final size, where pushing field by field grew it twice (about 350 bytes more per answer).
   */
  private listBlock(status: number, fields: readonly OutgoingHttpHeader[]): unknown[] {
    const n = fields.length & ~1;
    const out = new Array<unknown>(n + 2);
    out[0] = ':status';
    out[1] = status;
    let at = 2;
    let bytes = STATUS_LINE_BYTES;
    let date = false;
    for (let i = 0; i < n; i += 2) {
      const name = String(fields[i]);
      const value = fields[i + 1] as FieldValue | undefined;
      if (value === undefined || connectionField(name)) continue;
      out[at++] = name;
      out[at++] = value;
      bytes += fieldBytes(name, value);
      if (name.length === 4 && name.toLowerCase() === 'date') date = true;
    }
    out.length = at;
    this.headTextBytes = date ? bytes : bytes + DATE_BYTES;
    return out;
  }

  /** Sends the head; `end`: nothing follows it (HEADERS with END_STREAM). False: the stream is gone. */
  private sendHead(end: boolean): boolean {
    const head = this.head!;
    this.head = undefined;
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return false;
    try {
      stream.respond(head as unknown as readonly string[], end ? END_STREAM : undefined);
    } catch {
      // What node refuses in a head (a status HTTP/2 cannot carry, a single-value field twice).
      this.reset();
      return false;
    }
    this.headBytes = this.headTextBytes;
    return true;
  }

  /** The answer cannot go out as it should: the stream is reset, and the record says so. */
  private reset(): void {
    if (this.tx !== undefined) this.tx.aborted = true;
    if (!this.stream.destroyed && !this.stream.closed) this.stream.close(constants.NGHTTP2_INTERNAL_ERROR);
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | WriteCallback, cb?: WriteCallback): boolean {
    if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    if (!this.headersSent) this.writeHead(this.statusCode);
    if (this.head !== undefined) this.sendHead(false);
    const stream = this.stream;
    if (this.writableEnded || stream.destroyed || stream.closed) {
      if (cb !== undefined) process.nextTick(cb, new Error('write after the answer ended or its stream closed'));
      return false;
    }
    // HEAD, 204, 304: node ended the stream's writable side with the head; a body is dropped.
    if (stream.writableEnded) {
      if (cb !== undefined) process.nextTick(cb);
      return true;
    }
    this.bodyBytes += typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.byteLength;
    const ok = encoding === undefined ? stream.write(chunk, cb) : stream.write(chunk, encoding, cb);
    if (!ok && !this.drainWatched) {
      this.drainWatched = true;
      stream.on('drain', onStreamDrain);
    }
    return ok;
  }

  end(chunk?: string | Uint8Array | (() => void), encoding?: BufferEncoding | (() => void), cb?: () => void): this {
    if (typeof chunk === 'function') { cb = chunk; chunk = undefined; }
    if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    if (this.writableEnded) {
      if (cb !== undefined) process.nextTick(cb);
      return this;
    }
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.writableEnded = true;
    const stream = this.stream;
    const empty = chunk === undefined || chunk === null || chunk.length === 0;
    if (this.head !== undefined) this.sendHead(empty);
    if (cb !== undefined) {
      if (stream.destroyed || stream.writableFinished) process.nextTick(cb);
      else stream.once('finish', cb);
    }
    if (stream.destroyed || stream.closed || stream.writableEnded) return this;
    if (empty) { stream.end(); return this; }
    this.bodyBytes += typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : (chunk as Uint8Array).byteLength;
    if (encoding === undefined) stream.end(chunk);
    else stream.end(chunk, encoding);
    return this;
  }

  /**
   * A stage cuts an answer short (an origin body broke, a file failed): HTTP/1 cuts the
   * connection; here the stream is reset with INTERNAL_ERROR (node would send NO_ERROR for a
   * destroy without an error, which a client may take for a complete answer without a length).
   */
  destroy(err?: Error): this {
    if (!this.stream.destroyed) this.stream.destroy(err ?? new Error('answer cut short'));
    return this;
  }

  setHeader(name: string, value: FieldValue): this {
    if (this.headersSent) throw Object.assign(new Error(`Cannot set header ${name} after the head was written`), { code: 'ERR_HTTP_HEADERS_SENT' });
    validateHeaderName(name);
    validateHeaderValue(name, value as string);
    (this.fields ??= Object.create(null) as Record<string, FieldValue>)[name.toLowerCase()] = value;
    return this;
  }

  getHeader(name: string): FieldValue | undefined {
    return this.fields?.[name.toLowerCase()];
  }

  hasHeader(name: string): boolean {
    return this.fields?.[name.toLowerCase()] !== undefined;
  }

  removeHeader(name: string): void {
    if (this.fields !== undefined) delete this.fields[name.toLowerCase()];
  }

  getHeaderNames(): string[] {
    return this.fields === undefined ? [] : Object.keys(this.fields);
  }

  getHeaders(): Record<string, FieldValue> {
    return { ...this.fields };
  }

  /** The stream closed (answered, reset, or its connection gone): 'finish' if it all went out, then 'close'. */
  closed(): void {
    this.owner.streamClosed();
    if (this.writableFinished) this.emit('finish');
    this.onEnded?.(this);
    this.emit('close');
  }
}
Object.setPrototypeOf(H2Response.prototype, EventEmitter.prototype);

/** Whether writeHead's fields have this (lower-case) name. */
function hasField(fields: OutgoingHttpHeaders | readonly OutgoingHttpHeader[], name: string): boolean {
  if (!Array.isArray(fields)) return (fields as OutgoingHttpHeaders)[name] !== undefined;
  for (let i = 0; i < fields.length; i += 2) {
    const n = fields[i];
    if (n === name || (typeof n === 'string' && n.length === name.length && n.toLowerCase() === name)) return true;
  }
  return false;
}

/** Appends one field to a header block; returns its bytes as HTTP/1 text (an empty list: none). */
function pushField(out: unknown[], name: string, value: FieldValue): number {
  out.push(name, value);
  return fieldBytes(name, value);
}

/** A field's bytes as HTTP/1 text (`name: value` CRLF per value; an empty list: none). */
function fieldBytes(name: string, value: FieldValue): number {
  if (typeof value === 'string') return name.length + value.length + 4;
  if (typeof value === 'number') return name.length + String(value).length + 4;
  let n = 0;
  for (const v of value) n += name.length + String(v).length + 4;
  return n;
}

// The stream's listeners: shared functions, the response found on the stream.

function onStreamClose(this: TxStream): void {
  this[RES]!.closed();
}

/**
 * A stream error (a reset with an error code, a write refused) closes the stream next: the
 * transaction learns it there (completed, aborted). Without a listener it would be thrown.
 */
function onStreamError(): void {
  // The 'close' that follows ends the transaction.
}

function onStreamDrain(this: TxStream): void {
  this[RES]!.emit('drain');
}

/** The stream's push, counting the request body's bytes as they arrive. */
function countedPush(this: TxStream, chunk: unknown, encoding?: BufferEncoding): boolean {
  if (chunk !== null && chunk !== undefined) this[RES]!.req.bodyBytes += (chunk as Uint8Array).byteLength;
  return Readable.prototype.push.call(this, chunk, encoding);
}
