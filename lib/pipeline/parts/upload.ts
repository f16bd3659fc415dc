// Request bodies on their way to the origin (or to the owner worker). A slow client must not hold
// an origin connection while it trickles its body in: each pool has a few hundred connections,
// and ~500 slow uploads once left every cache miss of the node waiting for one. So:
// - the start of the body (all of a small one) is read before a connection is taken
//   (frontEnd.bufferBodyUpTo): a request holds a connection only once it is ready to use it;
// - the upload has a minimum rate (frontEnd.bodyMinRate): a client that sends fewer than
//   bytesPerSecond x period bytes in a period while we wait for them gets 408 and its connection
//   closed, instead of holding a slot for the whole requestTimeout (300 s).
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { h2BodyBytesIn, isH2, requestBody } from './h2.js';
import { sendError } from './respond.js';
import type { Transaction } from './transaction.js';
import type { UploadLimits } from './shapes.js';

/**
 * The body is read whole (a Buffer, which can also be sent again to a second address), or it
 * is the request stream itself with what was read put back in front (a large body). undefined:
 * there is no body to send any more (the client left, or was too slow and has its 408).
 */
export type TakenBody = Buffer | Readable;

/**
 * Bytes the client has sent so far: the connection's (HTTP/1 carries one request at a time), or
 * an HTTP/2 stream's own (its connection carries other requests too).
 */
function bytesIn(req: IncomingMessage): number {
  return req.httpVersionMajor === 2 && isH2(req) ? h2BodyBytesIn(req) : req.socket?.bytesRead ?? 0;
}

export class Upload {
  /** Set while the body streams on: ends that request (its client was too slow). */
  onStall: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private seen = 0;
  private give: ((body: TakenBody | undefined) => void) | null = null;

  constructor(private readonly tx: Transaction, private readonly limits: UploadLimits) {
    const req = tx.req;
    if (limits.minBytesPerPeriod > 0 && !req.complete) {
      this.seen = bytesIn(req);
      this.timer = setTimeout(this.check, limits.periodMs);
      tx.res.once('close', this.stop);
    }
  }

  /** Reads the start of the body (see TakenBody); resolves when the request is ready to go. */
  take(): Promise<TakenBody | undefined> {
    // An HTTP/2 request's body is its stream's readable side.
    const body = requestBody(this.tx.req);
    const limit = this.limits.bufferUpTo;
    if (limit <= 0) return Promise.resolve(body);
    if (body.readableEnded) return Promise.resolve(Buffer.alloc(0));
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const settle = (taken: TakenBody | undefined): void => {
        if (this.give === null) return;
        this.give = null;
        body.off('readable', onReadable);
        body.off('end', onEnd);
        body.off('error', onGone);
        this.tx.res.off('close', onGone);
        resolve(taken);
      };
      const onReadable = (): void => {
        let chunk: Buffer | null;
        while ((chunk = body.read() as Buffer | null) !== null) {
          chunks.push(chunk);
          size += chunk.length;
          if (size > limit) {
            // Larger than a small body: it streams from here, starting with what was read.
            body.unshift(chunks.length === 1 ? chunk : Buffer.concat(chunks, size));
            settle(body);
            return;
          }
        }
      };
      const onEnd = (): void => {
        this.stop();
        settle(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      };
      const onGone = (): void => settle(undefined);
      this.give = settle;
      body.on('readable', onReadable);
      body.on('end', onEnd);
      // A client that disconnects mid-body errors the request; the response closes with it.
      body.on('error', onGone);
      this.tx.res.once('close', onGone);
    });
  }

  readonly stop = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  };

  private readonly check = (): void => {
    const tx = this.tx;
    const req = tx.req;
    if (req.complete || tx.res.destroyed) { this.stop(); return; }
    const now = bytesIn(req);
    const body = requestBody(req);
    const got = now - this.seen;
    this.seen = now;
    // With the request's buffer full we are the ones not reading (the origin takes the body
    // slowly, or the request waits for a connection): not the client's fault.
    const waitingForClient = body.readableLength < body.readableHighWaterMark;
    if (waitingForClient && got < this.limits.minBytesPerPeriod) { this.stall(); return; }
    this.timer!.refresh();
  };

  private stall(): void {
    this.stop();
    const tx = this.tx;
    this.give?.(undefined);
    tx.status = 408;
    // The unread rest of the body cannot be told from a next request: the connection goes.
    // Once the answer has started, sendError cuts the connection instead.
    sendError(tx.res, 408, undefined, true);
    // The request going on with the body ends once the 408 is out: ending it destroys the
    // request stream and with it the socket, which would cut the 408 short.
    if (this.onStall !== null) tx.res.once('close', this.onStall);
  }
}

/** The limits of a host's frontEnd block (bodyMinRate.period in seconds). */
export function uploadLimits(frontEnd: { bufferBodyUpTo: number; bodyMinRate: { bytesPerSecond: number; period: number } }): UploadLimits {
  const { bytesPerSecond, period } = frontEnd.bodyMinRate;
  return { bufferUpTo: frontEnd.bufferBodyUpTo, minBytesPerPeriod: Math.ceil(bytesPerSecond * period), periodMs: period * 1000 };
}
