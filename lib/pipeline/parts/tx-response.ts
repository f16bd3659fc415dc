// The ServerResponse of the service listeners: it carries its transaction and writes the head
// every answer of the worker passes through (the time to first byte, the answer fields, a
// fallback's serviceCode, Cache-Status, the front modify edits), and it marks a connection whose
// answer closes it. Apart from the record (transaction.ts), which every module reads: this
// writing reads those modules, and they read the record.
import { ServerResponse, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { TransactionRecord } from './transaction.js';
import { answerFields, answerStatus } from './answer-head.js';

/** Set on a connection once an answer on it was written with `Connection: close`. */
const CLOSING = Symbol('answer closes the connection');
type MarkedSocket = Socket & { [CLOSING]?: true };

/**
 * Whether an answer already written on this connection closes it. node keeps parsing what the
 * client pipelined behind that answer and hands each request to the listener, though none of
 * their answers can ever go out: the listener drops them (service-server.ts), so a request the
 * client sent after a refusal never runs, at the origin or anywhere.
 */
export function connectionClosing(socket: Socket): boolean {
  return (socket as MarkedSocket)[CLOSING] === true;
}

/** The connection's last answer is written (by writeHead below, or raw by the listener). */
export function markConnectionClosing(socket: Socket): void {
  (socket as MarkedSocket)[CLOSING] = true;
}

/**
 * The ServerResponse of the service listeners (node:http's `ServerResponse` option): it carries
 * its transaction, so finish's hook on its 'close' finds it (no closure per request),
 * and it stamps the time to first byte when the head is written, whichever stage writes it.
 */
export class TxResponse extends ServerResponse {
  tx: TransactionRecord | undefined = undefined;
  /**
   * What the response's 'close' runs before its listeners: first the listener's bookkeeping of
   * its connection (service-server.ts), then the transaction's finish (steps.ts). Hooks, not
   * listeners: two listeners made node keep an array of them on every response and copy it for
   * every 'close', and one listener still cost a listener table entry per response.
   */
  onConnectionAnswered: ((res: TxResponse) => void) | undefined = undefined;
  onEnded: ((res: TxResponse) => void) | undefined = undefined;

  /**
   * node emits the response's 'close' once, however it ends (answered, or its connection gone
   * first: emitCloseNT, onServerResponseClose); the hooks run then, before any listener.
   */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'close') {
      this.onConnectionAnswered?.(this);
      this.onEnded?.(this);
    }
    return super.emit(event, ...args);
  }

  override writeHead(statusCode: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    this.head(statusCode, reason, headers);
    // node decides in writeHead whether this answer is the connection's last (`_last`: a
    // Connection: close it was given or added itself: a refusal, a drain, a client that asked);
    // every way an answer starts passes here (node's implicit head calls writeHead too).
    if ((this as unknown as { _last?: boolean })._last === true) markConnectionClosing(this.req.socket);
    return this;
  }

  private head(statusCode: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    const tx = this.tx;
    tx?.answerStarts();
    const fields = answerFields(this, tx, typeof reason === 'object' ? reason : headers);
    return super.writeHead(answerStatus(tx, statusCode), typeof reason === 'string' ? reason : undefined, fields as OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined);
  }
}

