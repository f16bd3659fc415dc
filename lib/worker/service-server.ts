// One node:http server per listening socket. llhttp enforces the message syntax (malformed
// lines, Content-Length/Transfer-Encoding conflicts, header overflow) before our code runs; the
// clientError hook turns those refusals into complete answers, after the answers still owed on
// the connection. Connections are tracked so a drain can close idle keep-alive sockets while
// requests in flight finish.
import http, { type IncomingMessage } from 'node:http';
import net, { type Socket } from 'node:net';
import { firstBytesSeen, onClientError, OwedAnswers, refuseConnection, spacedRequestLine, versionlessRequestLine, type ConnectionAnswers } from './client-errors.js';
import { rawErrorResponse } from '../pipeline/parts/respond.js';
import { connectionClosing, TxResponse } from '../pipeline/parts/tx-response.js';
import { countClientSocket, markCounted } from './client-sockets.js';
import type { Listener } from './listen-handle.js';

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

/** Beyond the keep-alive timeout before an idle connection is closed (node's keepAliveTimeoutBuffer). */
const KEEP_ALIVE_BUFFER_MS = 1000;
/** How often idle keep-alive connections are looked for. */
const SWEEP_MS = 1000;

/**
 * `firstLine`: the connection's first request line is still to be looked at (watchFirstRead).
 * `answered`: an answer went out, so the keep-alive timeout runs (as node's starts with the first
 * answer); `readSeen`: the connection's bytes read at the previous sweep (bytes since: not idle).
 * `lastUsed`: when the connection was last seen in use. An answer that ends does not read the
 * clock (a clock read per response, on the hit path): it sets `answeredSince`, and the next sweep
 * (or drain round) stamps `lastUsed` with its own time, at most one sweep later than the answer,
 * so an idle connection is closed at most that much later, never sooner.
 */
interface SocketUse extends ConnectionAnswers { lastUsed: number; firstLine: boolean; answered: boolean; answeredSince: boolean; readSeen: number }

/** The sweep's (or drain's) stamp of an answer that ended since it last looked. */
function stampAnswered(use: SocketUse, now: number): void {
  if (!use.answeredSince) return;
  use.answeredSince = false;
  use.lastUsed = now;
}

/** node's parser slot for its per-chunk callback (HTTPParser.kOnExecute). */
const K_ON_EXECUTE = 5;
interface NodeParser {
  [K_ON_EXECUTE]: ((ret: unknown) => void) | null;
  incoming: IncomingMessage | null;
  getCurrentBuffer(): Buffer;
}
type ParsedSocket = Socket & { parser?: NodeParser | null };

/**
 * The connection's first request line, where llhttp is lenient and we are not: an HTTP/0.9 line
 * (`GET /path` and a line end, no version), which llhttp accepts and then waits on for fields a
 * 0.9 client never sends (the client would sit until the head timeout: 408), and more than one
 * SP between the parts of the line, which llhttp skips (spacedRequestLine). Both are refused with
 * 400 at once. No event tells us: the parser's first read is looked at once, after the parser,
 * through its per-chunk callback, when that read left a request head unfinished (a 0.9 client
 * sends its one line as the first thing on a fresh connection); a head that completed in it is
 * looked at by the request handler instead (firstLineRefused), before the pipeline sees it. The
 * read is copied for that (getCurrentBuffer) once per connection: a copy of every read, to look
 * at every request line, measured about 2 µs a request, a seventh of a hit-1k request's CPU, so
 * the request lines after a connection's first are read as llhttp reads them. When the callback
 * is not node's own (another node version), nothing is checked and the head timeout applies.
 * Returns whether the first read is watched.
 */
function watchFirstRead(socket: ParsedSocket, use: SocketUse): boolean {
  const parser = socket.parser;
  const onExecute = parser?.[K_ON_EXECUTE];
  if (parser == null || typeof onExecute !== 'function' || onExecute.name !== 'bound onParserExecute') return false;
  parser[K_ON_EXECUTE] = (ret: unknown): void => {
    parser[K_ON_EXECUTE] = onExecute;
    // Still unchecked: no request handler ran in this read (an unfinished head, or an Upgrade).
    const unchecked = use.firstLine;
    use.firstLine = false;
    let refused: Buffer | undefined;
    if (unchecked && typeof ret === 'number') {
      const chunk = parser.getCurrentBuffer();
      if (spacedRequestLine(chunk) || (parser.incoming === null && versionlessRequestLine(chunk))) refused = chunk;
    }
    onExecute(ret);
    if (refused !== undefined && socket.writable) refuseConnection(socket, 400, refused);
  };
  return true;
}

/**
 * The connection's first request, its head complete within the parser's first read, which its
 * request line starts: refused (400, the connection closed) when that line has more than one SP
 * between its parts. Runs only while `use.firstLine`.
 */
function firstLineRefused(socket: ParsedSocket, use: SocketUse): boolean {
  use.firstLine = false;
  const parser = socket.parser;
  const chunk = parser?.getCurrentBuffer();
  if (chunk === undefined || !spacedRequestLine(chunk)) return false;
  refuseConnection(socket, 400, chunk);
  return true;
}

/**
 * The head of an Upgrade request again, without its Upgrade fields. llhttp has validated it
 * (no folded or bare-LF lines), so its fields are written back as they came.
 */
function headWithoutUpgrade(req: IncomingMessage): Buffer {
  let head = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'upgrade') head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  return Buffer.from(`${head}\r\n`, 'latin1');
}

/** Where a connection keeps its SocketUse, so a request finds it without a lookup or closure. */
const USE = Symbol('socket use');
type TrackedSocket = Socket & { [USE]?: SocketUse };

/** One hook for every response's 'close' (no closure per request): its connection is idle again. */
function responseClosed(res: TxResponse): void {
  const use = (res.req.socket as TrackedSocket)[USE];
  if (use === undefined) return;
  use.pending.delete(res);
  use.answered = true;
  use.answeredSince = true;
  use.onAnswered?.();
}

/** node:http's options of a service listener. */
function serverOptions(t: ServerTimeouts): http.ServerOptions<typeof http.IncomingMessage, typeof TxResponse> {
  return {
    // Carries the transaction for the finish stage and stamps the time to first byte.
    ServerResponse: TxResponse,
    maxHeaderSize: t.maxHeaderSize,
    requestTimeout: t.requestMs,
    headersTimeout: t.headersMs,
    // node's keep-alive timeout is a timer per connection that it clears as each request starts
    // and sets again as each answer ends, a tenth of node's own work per hit: this server looks
    // for idle connections once a second instead (sweepIdle), and each answer says the timeout
    // as node would (Keep-Alive: timeout=N, from the response's _keepAliveTimeout).
    keepAliveTimeout: 0,
    noDelay: true,
    requireHostHeader: true,
    // How often slow request heads and bodies are checked against their timeouts (node's
    // default, 30 s, would let a slow client hold a connection far past headersTimeout).
    connectionsCheckingInterval: Math.min(1000, t.headersMs),
    // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 6.3): node
    // then marks its stream ended at once instead of running a Readable's end for every GET
    // (a read, an 'end' and a 'close' emitted on later ticks, a listener to clear the parser's
    // reference). Nothing of ours reads or waits on such a request's stream.
    optimizeEmptyRequests: true,
  };
}

export class ServiceServer {
  readonly server: http.Server<typeof http.IncomingMessage, typeof TxResponse>;
  private readonly sockets = new Map<Socket, SocketUse>();
  private draining = false;
  /**
   * Idle time allowed between requests on a keep-alive connection (ms; 0: none), kept here rather
   * than by node (see sweepIdle).
   */
  keepAliveMs: number;
  /** Gives the listening socket back (to the supervisor) once this server stops accepting. */
  private release: () => void = () => undefined;

  /** `clients` false: the internal (sibling) port, whose connections are not client connections. */
  constructor(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, t: ServerTimeouts, clients = true) {
    this.keepAliveMs = t.keepAliveMs;
    this.server = http.createServer(serverOptions(t), (req, res) => {
      // An answer before this one closes the connection (a refusal with Connection: close, a
      // drain): this request was pipelined behind it and can never be answered. It is dropped
      // before the pipeline sees it, so nothing the client sent after a refusal reaches an origin.
      if (connectionClosing(req.socket)) return;
      const use = (req.socket as TrackedSocket)[USE];
      if (use !== undefined) {
        if (use.firstLine && firstLineRefused(req.socket, use)) return;
        use.pending.add(res);
        res.onConnectionAnswered = responseClosed;
      }
      // Draining: this answer closes its connection, so the client's next request goes elsewhere.
      if (this.draining) res.shouldKeepAlive = false;
      (res as unknown as { _keepAliveTimeout: number })._keepAliveTimeout = this.keepAliveMs;
      handler(req, res);
    });
    const sweep = setInterval(() => this.sweepIdle(), SWEEP_MS);
    sweep.unref();
    this.server.on('close', () => clearInterval(sweep));
    this.server.maxRequestsPerSocket = 0;
    // node stops collecting fields after maxHeadersCount (2,000) but the parser still honours a
    // Content-Length, Transfer-Encoding or second Host after them: keep every field, and let the
    // receive stage refuse too many (frontEnd.maxHeaderCount, 431). The byte limit above bounds them.
    this.server.maxHeadersCount = 0;
    this.server.on('clientError', (err: Error, socket: Socket) => onClientError(err, socket, this.sockets.get(socket)));
    // CONNECT never reaches the request handler; a reverse proxy does not tunnel.
    this.server.on('connect', (_req: http.IncomingMessage, socket: Socket) => {
      socket.end(rawErrorResponse(405, { Allow: 'GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS' }));
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, rest: Buffer) => this.ignoreUpgrade(req, socket, rest));
    this.server.on('connection', (socket: TrackedSocket) => {
      // A socket handed back after an Upgrade request (ignoreUpgrade) keeps its record.
      if (this.sockets.has(socket)) return;
      if (clients) countClientSocket(socket);
      const use: SocketUse = { pending: new OwedAnswers(), onAnswered: undefined, refused: false, lastUsed: Date.now(), firstLine: false, answered: false, answeredSince: false, readSeen: 0 };
      socket[USE] = use;
      this.sockets.set(socket, use);
      socket.once('close', () => this.sockets.delete(socket));
      // h2c looked at the first bytes itself (and refused a bad first request line there).
      if (!firstBytesSeen(socket)) use.firstLine = watchFirstRead(socket, use);
    });
  }

  /**
   * No upgrade is implemented (no WebSocket tunnel), and RFC 9110 7.8 lets a server ignore
   * Upgrade and answer the request as usual. node:http cannot: llhttp stops after a request with
   * Upgrade, and without an 'upgrade' listener node drops the bytes behind it in the same read (a
   * pipelined request vanished unanswered). With the listener node hands over the socket, the
   * request and those bytes (its body included: node tells llhttp to skip it). The request goes
   * back in front of them without its Upgrade fields, and the socket to the server as a new
   * connection, so parsing, timeouts and the order of answers are node's own again. Answers
   * still owed on the connection are waited for first: their queue belonged to the parser state
   * node just dropped, and a new one would not line up behind it.
   */
  private ignoreUpgrade(req: IncomingMessage, socket: Socket, rest: Buffer): void {
    const bytes = Buffer.concat([headWithoutUpgrade(req), rest]);
    // node took its error listener off the socket with the parser: until the socket is handed
    // back, a client reset would be an unhandled 'error' and take the worker down.
    const onError = (): void => { socket.destroy(); };
    socket.on('error', onError);
    // Deferred: node has just put the old parser back in its pool, within that parser's own call.
    const replay = (): void => {
      socket.off('error', onError);
      if (socket.destroyed) return;
      // Nothing more can be read (a stream cannot take bytes back after its end).
      if (socket.readableEnded) { socket.destroy(); return; }
      socket.unshift(bytes);
      this.server.emit('connection', socket);
    };
    const use = this.sockets.get(socket);
    if (use === undefined || use.pending.size === 0) {
      setImmediate(replay);
      return;
    }
    use.onAnswered = () => {
      if (use.pending.size > 0) return;
      use.onAnswered = undefined;
      setImmediate(replay);
    };
  }

  /**
   * Closes the keep-alive connections idle for longer than the timeout (and node's buffer of a
   * second beyond it), as node's timer did: idle means no answer owed or still being sent and no
   * byte read since the last answer (a request arriving is not idle). As with node, the timeout
   * starts with a connection's first answer. While draining, drain() closes them itself.
   */
  private sweepIdle(): void {
    if (this.keepAliveMs <= 0 || this.draining) return;
    const now = Date.now();
    for (const [socket, use] of this.sockets) {
      stampAnswered(use, now);
      const read = socket.bytesRead;
      if (read !== use.readSeen) { use.readSeen = read; use.lastUsed = Math.max(use.lastUsed, now - SWEEP_MS); continue; }
      if (!use.answered || use.pending.size > 0 || socket.writableLength > 0) continue;
      if (now - use.lastUsed >= this.keepAliveMs + KEEP_ALIVE_BUFFER_MS) socket.destroy();
    }
  }

  async listen(listener: Listener, host: string | null, port: number): Promise<void> {
    this.release = await listener(this.server, host, port);
  }

  /**
   * For a server that never listens itself: the TLS front (tls-server.ts) hands it each
   * connection after the handshake. node starts its checks of slow heads and bodies
   * (headersTimeout, requestTimeout) on 'listening', so that event is given here once.
   */
  serveHandedOver(): void {
    this.server.emit('listening');
  }

  /** A connection accepted elsewhere (a TLS socket after its handshake), served like our own. */
  adopt(socket: Socket): void {
    // Counted once already, as the TCP connection the TLS front accepted.
    markCounted(socket);
    this.server.emit('connection', socket);
  }

  get connections(): number {
    return this.sockets.size;
  }

  /** Connections with a request in progress (read once a second by the statistics). */
  get busy(): number {
    let n = 0;
    for (const use of this.sockets.values()) if (use.pending.size > 0) n++;
    return n;
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
    this.release();
    const deadline = Date.now() + timeoutMs;
    while (this.sockets.size > 0 && Date.now() < deadline) {
      const now = Date.now();
      for (const [socket, use] of this.sockets) {
        stampAnswered(use, now);
        if (use.pending.size === 0 && now - use.lastUsed >= DRAIN_IDLE_MS) socket.end();
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const s of this.sockets.keys()) s.destroy();
    await closed;
  }

  /** Closes the listening socket only: connections stay with their requests. */
  stopListening(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.release();
    return closed;
  }
}
