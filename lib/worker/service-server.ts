// One node:http server per listening socket. llhttp enforces the message syntax (malformed
// lines, Content-Length/Transfer-Encoding conflicts, header overflow) before our code runs; the
// clientError hook turns those refusals into complete answers. Connections are tracked so a
// drain can close idle keep-alive sockets while requests in flight finish.
import http from 'node:http';
import net, { type Socket } from 'node:net';
import { onClientError } from './client-errors.js';
import { rawErrorResponse } from '../pipeline/respond.js';

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

/** While draining, an idle connection is closed only after this long without a request. */
const DRAIN_IDLE_MS = 400;

interface SocketUse { busy: number; lastUsed: number }

/** Where a connection keeps its SocketUse, so a request finds it without a lookup or closure. */
const USE = Symbol('socket use');
type TrackedSocket = Socket & { [USE]?: SocketUse };

/** One listener for every response (no closure per request): its connection is idle again. */
function responseClosed(this: http.ServerResponse): void {
  const use = (this.req.socket as TrackedSocket)[USE];
  if (use === undefined) return;
  use.busy--;
  use.lastUsed = Date.now();
}

export class ServiceServer {
  readonly server: http.Server;
  private readonly sockets = new Map<Socket, SocketUse>();
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
      const use = (req.socket as TrackedSocket)[USE];
      if (use !== undefined) {
        use.busy++;
        res.on('close', responseClosed);
      }
      // Draining: this answer closes its connection, so the client's next request goes elsewhere.
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
    this.server.on('connection', (socket: TrackedSocket) => {
      const use: SocketUse = { busy: 0, lastUsed: Date.now() };
      socket[USE] = use;
      this.sockets.set(socket, use);
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
   * Stops accepting and lets requests in flight finish; each connection closes after its next
   * answer. A keep-alive connection is closed while idle only once it has been quiet for
   * DRAIN_IDLE_MS: closing one the client is just reusing would lose the request on the wire
   * (the HTTP/1.1 keep-alive race). After `timeoutMs` whatever is left is cut.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    // http.Server#close() would also shut every idle connection at once (the race above):
    // stop listening only, and pace the idle closes ourselves.
    const closed = new Promise<void>((resolve) => {
      net.Server.prototype.close.call(this.server, () => resolve());
    });
    const deadline = Date.now() + timeoutMs;
    while (this.sockets.size > 0 && Date.now() < deadline) {
      const now = Date.now();
      for (const [socket, use] of this.sockets) {
        if (use.busy === 0 && now - use.lastUsed >= DRAIN_IDLE_MS) socket.end();
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const s of this.sockets.keys()) s.destroy();
    await closed;
  }

  /** Closes the listening socket only: connections stay with their requests. */
  stopListening(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
