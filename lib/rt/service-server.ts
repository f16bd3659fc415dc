// One node:http server per listening socket. llhttp enforces the message syntax (malformed
// lines, Content-Length/Transfer-Encoding conflicts, header overflow) before our code runs; the
// clientError hook turns those refusals into complete answers. Connections are tracked so a
// drain can close idle keep-alive sockets while requests in flight finish.
import http from 'node:http';
import type { Socket } from 'node:net';
import { onClientError } from './client-errors.js';
import { rawErrorResponse } from './respond.js';

export interface ServerTimeouts {
  /** Idle time allowed between requests on a keep-alive connection (ms). */
  keepAliveMs: number;
  /** Time allowed to receive the request head (ms). */
  headersMs: number;
  /** Time allowed to receive the whole request (ms). */
  requestMs: number;
  /** Parser limit for the request head; requests beyond it get 431. */
  maxHeaderSize: number;
}

export class ServiceServer {
  readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private draining = false;

  constructor(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, t: ServerTimeouts) {
    this.server = http.createServer({
      maxHeaderSize: t.maxHeaderSize,
      requestTimeout: t.requestMs,
      headersTimeout: t.headersMs,
      keepAliveTimeout: t.keepAliveMs,
      noDelay: true,
      requireHostHeader: true,
      // How often slow request heads and bodies are checked against their timeouts (node's
      // default, 30 s, would let a slow client hold a connection far past headersTimeout).
      connectionsCheckingInterval: Math.min(1000, t.headersMs),
    }, (req, res) => {
      if (this.draining) res.shouldKeepAlive = false;
      handler(req, res);
    });
    this.server.keepAliveTimeout = t.keepAliveMs;
    this.server.maxRequestsPerSocket = 0;
    this.server.on('clientError', onClientError);
    // CONNECT never reaches the request handler; a reverse proxy does not tunnel.
    this.server.on('connect', (_req: http.IncomingMessage, socket: Socket) => {
      socket.end(rawErrorResponse(405, { Allow: 'GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS' }));
    });
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  listen(host: string | null, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen({ host: host ?? undefined, port }, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
  }

  get connections(): number {
    return this.sockets.size;
  }

  /**
   * Stops accepting, lets requests in flight finish (their connections close after the answer),
   * closes idle keep-alive connections, and after `timeoutMs` cuts whatever is left.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    const deadline = Date.now() + timeoutMs;
    while (this.sockets.size > 0 && Date.now() < deadline) {
      this.server.closeIdleConnections();
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  /** Closes the listening socket only: connections stay with their requests. */
  stopListening(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
