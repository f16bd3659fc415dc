// The HTTP/2 side of a service port. It never listens itself: the TLS front (tls-server.ts)
// hands it each connection whose ALPN chose `h2`, and a plain port with h2c on hands it the
// connections that open with the HTTP/2 preface. node:http2 runs the protocol (nghttp2: framing,
// HPACK, flow control, and the known floods: rapid reset, CONTINUATION, SETTINGS and PING floods,
// invalid frames, each answered with GOAWAY and the session closed). Its stream API hands us each
// stream; the pipeline's own request/response pair on it (pipeline parts/h2-stream.ts) goes to
// the same handler as HTTP/1. node's compatibility layer is not used: it costs a Readable, a
// header map, a trailers round trip and a dozen listeners per stream, measured at about 40% of
// the worker's CPU per h2 hit of 1 KiB. What node leaves to us: the protocol limits from the
// setting, a SETTINGS acknowledgement timeout, idle connections, drain (GOAWAY, then the open
// streams finish), and what its compatibility layer did for Expect (100-continue answered,
// anything else 417).
import http2, { type Http2Server, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { H2Request, H2Response, type StreamOwner } from '../pipeline/parts/h2-stream.js';

/** `functions.network.http.frontEnd.http2` (global values), in the units node takes. */
export interface H2Settings {
  enable: boolean;
  cleartext: boolean;
  maxConcurrentStreams: number;
  maxHeaderListSize: number;
  initialWindowSize: number;
  settingsTimeoutMs: number;
  /** Idle time after which a connection without open streams is closed (keepAliveTimeout). */
  idleMs: number;
  /** frontEnd.maxHeaderCount: node's own field count ceiling is set above it (see build). */
  maxHeaderCount: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Rapid reset (CVE-2023-44487): nghttp2 counts the streams a client resets in a token bucket
 * (node's `streamResetBurst` / `streamResetRate`, 1000 and 33 a second by default) and, once it
 * is empty, sends GOAWAY INTERNAL_ERROR and closes the connection, inside the read that carried
 * the resets. A client may legitimately cancel every stream it has open, twice a second say:
 * the bucket holds that (at most RESET_BUDGET_MAX) and refills at the same pace. (On Node 20 a
 * budget counted here on each stream's 'close' sent ENHANCE_YOUR_CALM; on Node 24 nghttp2 acts
 * first, since 'close' events come only after the whole read, so the count is nghttp2's alone.)
 */
const RESET_BUDGET_MAX = 500;

// (destroy() takes the code only beside an error: alone, node sends NO_ERROR.)
const { NGHTTP2_SETTINGS_TIMEOUT, NGHTTP2_INADEQUATE_SECURITY } = http2.constants;

const CONTINUE = Object.freeze({ ':status': 100 });
const EXPECTATION_FAILED = Object.freeze({ ':status': 417, 'content-length': '0' });

/**
 * One HTTP/2 connection: its open streams and idle time passed meanwhile. Its socket is the one
 * handed to adopt() (node's session.socket is a Proxy in front of it), which the requests give
 * the stages for the connection's addresses.
 */
class H2Connection implements StreamOwner {
  open = 0;

  constructor(readonly session: ServerHttp2Session, readonly socket: Socket, private readonly handler: Handler, private readonly idleMs: number) {}

  /** session 'stream': the request and response for the handler (CONNECT too: receive answers it 405). */
  readonly onStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, rawHeaders: string[]): void => {
    if (headers.expect !== undefined && !this.expectation(stream, headers.expect)) return;
    // The idle timer waits only while no stream is open (streamClosed arms it again): node
    // refreshes an armed session timer on every HEADERS, respond and write, three timer list
    // moves per request, where a busy connection now has none.
    if (this.open++ === 0) this.session.setTimeout(0);
    const req = new H2Request(stream, headers, rawHeaders, this.socket);
    this.handler(req as unknown as IncomingMessage, new H2Response(stream, req, this) as unknown as ServerResponse);
  };

  /**
   * RFC 9110 10.1.1, as node:http answers it: `100-continue` gets its 100 at once (the body is
   * wanted), any other expectation 417 without the handler. False: the stream is answered.
   */
  private expectation(stream: ServerHttp2Stream, expect: string): boolean {
    try {
      if (expect.toLowerCase() === '100-continue') { stream.additionalHeaders(CONTINUE); return true; }
      stream.respond(EXPECTATION_FAILED, { endStream: true });
    } catch {
      // The stream went meanwhile (a reset): nothing to answer.
    }
    return false;
  }

  /**
   * A stream of this connection closed. Idle: no stream open and no frame either way for
   * keepAliveTimeout (node's session timer, armed while no stream is open). With streams open (a
   * slow origin) the connection stays, as an HTTP/1 connection with a request in flight does,
   * and the wait starts when the last ends.
   */
  streamClosed(): void {
    const session = this.session;
    if (--this.open > 0 || session.destroyed || session.closed) return;
    session.setTimeout(this.idleMs);
  }

  readonly onTimeout = (): void => {
    if (this.open === 0) this.session.close();
  };
}

export class H2Service {
  private server: Http2Server;
  private settings: H2Settings;
  private readonly sessions = new Map<ServerHttp2Session, H2Connection>();
  private draining = false;
  /** The socket being handed to node (adopt): its session starts within that call. */
  private adopting: Socket | undefined = undefined;

  constructor(private readonly handler: Handler, settings: H2Settings) {
    this.settings = settings;
    this.server = this.build(settings);
  }

  /**
   * One http2 server object per set of limits: node reads its options when a session starts, so
   * a reload builds a new one for the next connections and the open ones keep theirs.
   */
  private build(s: H2Settings): Http2Server {
    const server = http2.createServer({
      settings: {
        maxConcurrentStreams: s.maxConcurrentStreams,
        maxHeaderListSize: s.maxHeaderListSize,
        initialWindowSize: s.initialWindowSize,
        enablePush: false,
      },
      // node resets a stream with more fields than this (default 128) before our code sees it;
      // above frontEnd.maxHeaderCount (pseudo-headers count too), the receive stage answers 431.
      maxHeaderListPairs: s.maxHeaderCount + 5,
      streamResetBurst: resetBudget(s),
      streamResetRate: resetBudget(s),
    });
    server.on('session', (session: ServerHttp2Session) => this.track(session));
    // Session errors (a reset connection, a protocol error of the client) end that session only.
    server.on('sessionError', () => undefined);
    return server;
  }

  private track(session: ServerHttp2Session): void {
    const s = this.settings;
    const conn = new H2Connection(session, this.adopting ?? (session.socket as Socket), this.handler, s.idleMs);
    this.sessions.set(session, conn);
    // RFC 9113 6.5.3: a client that does not acknowledge our SETTINGS in time is not speaking
    // HTTP/2 with us (or is holding the connection open on purpose).
    const settingsTimer = setTimeout(() => session.destroy(new Error('SETTINGS not acknowledged'), NGHTTP2_SETTINGS_TIMEOUT), s.settingsTimeoutMs);
    session.once('localSettings', () => clearTimeout(settingsTimer));
    session.once('close', () => {
      clearTimeout(settingsTimer);
      this.sessions.delete(session);
    });
    session.on('timeout', conn.onTimeout);
    session.setTimeout(s.idleMs);
    session.on('stream', conn.onStream);
    // A connection that completed its handshake while the port was draining: GOAWAY at once.
    if (this.draining) session.close();
    // RFC 9113 9.2: HTTP/2 needs TLS 1.2 or later; a port that also enables TLS 1.0/1.1 may
    // still negotiate h2 with an old-protocol client (9.2.1: INADEQUATE_SECURITY).
    const version = (conn.socket as Partial<TLSSocket>).getProtocol?.();
    if (version === 'TLSv1' || version === 'TLSv1.1') session.destroy(new Error(`HTTP/2 over ${version}`), NGHTTP2_INADEQUATE_SECURITY);
  }

  /** A connection whose protocol is HTTP/2 (ALPN `h2`, or the h2c preface on a plain port). */
  adopt(socket: Socket): void {
    // node starts a session on a TLS socket only once it stops "connecting", which a server-side
    // socket made outside a tls.Server never does ('secureConnect' is a client event): the
    // handshake is done when this is called.
    (socket as Socket & { secureConnecting?: boolean }).secureConnecting = false;
    this.adopting = socket;
    try {
      this.server.emit('connection', socket);
    } finally {
      this.adopting = undefined;
    }
  }

  /** New limits for the next connections. */
  update(settings: H2Settings): void {
    this.settings = settings;
    this.server = this.build(settings);
  }

  get connections(): number {
    return this.sessions.size;
  }

  /** Connections with a stream open (read once a second by the statistics). */
  get busy(): number {
    let n = 0;
    for (const conn of this.sessions.values()) if (conn.open > 0) n++;
    return n;
  }

  /**
   * GOAWAY on every connection (the last stream id node has seen: those streams finish, later
   * ones the client retries elsewhere), then waits for them; after `timeoutMs` the rest are cut.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    for (const session of this.sessions.keys()) session.close();
    const deadline = Date.now() + timeoutMs;
    while (this.sessions.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const session of this.sessions.keys()) session.destroy();
  }
}

/** Streams a client may reset per second (see RESET_BUDGET_MAX). */
function resetBudget(s: H2Settings): number {
  return Math.min(2 * s.maxConcurrentStreams, RESET_BUDGET_MAX);
}
