// The HTTP/2 side of a service port. It never listens itself: the TLS front (tls-server.ts)
// hands it each connection whose ALPN chose `h2`, and a plain port with h2c on hands it the
// connections that open with the HTTP/2 preface. node:http2 runs the protocol (nghttp2: framing,
// HPACK, flow control, and the known floods: rapid reset, CONTINUATION, SETTINGS and PING floods,
// invalid frames, each answered with GOAWAY and the session closed); its compatibility layer
// turns each stream into a request/response pair for the same handler as HTTP/1 (pipeline h2.ts).
// What node leaves to us: the protocol limits from the setting, a SETTINGS acknowledgement
// timeout, idle connections, and drain (GOAWAY, then the open streams finish).
import http2, { type Http2Server, type ServerHttp2Session } from 'node:http2';

type TxH2Server = Http2Server<typeof IncomingMessage, typeof ServerResponse, typeof TxH2Request, typeof TxH2Response>;
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { TxH2Request, TxH2Response } from '../pipeline/parts/h2.js';

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

/** What the service keeps on each of its sessions: open streams and idle time passed meanwhile. */
interface SessionUse { open: number; idle: boolean }

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

export class H2Service {
  private server: TxH2Server;
  private settings: H2Settings;
  private readonly sessions = new Map<ServerHttp2Session, SessionUse>();
  private draining = false;

  constructor(private readonly handler: Handler, settings: H2Settings) {
    this.settings = settings;
    this.server = this.build(settings);
  }

  /**
   * One http2 server object per set of limits: node reads its options when a session starts, so
   * a reload builds a new one for the next connections and the open ones keep theirs.
   */
  private build(s: H2Settings): TxH2Server {
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
      Http2ServerRequest: TxH2Request,
      Http2ServerResponse: TxH2Response,
    }, this.handler as unknown as (req: TxH2Request, res: TxH2Response) => void);
    // CONNECT: node answers 405 itself unless someone listens; the handler's 405 is recorded.
    server.on('connect', this.handler as unknown as (req: TxH2Request, res: TxH2Response) => void);
    server.on('session', (session: ServerHttp2Session) => this.track(session));
    // Session errors (a reset connection, a protocol error of the client) end that session only.
    server.on('sessionError', () => undefined);
    return server;
  }

  private track(session: ServerHttp2Session): void {
    const use: SessionUse = { open: 0, idle: false };
    this.sessions.set(session, use);
    const s = this.settings;
    // RFC 9113 6.5.3: a client that does not acknowledge our SETTINGS in time is not speaking
    // HTTP/2 with us (or is holding the connection open on purpose).
    const settingsTimer = setTimeout(() => session.destroy(new Error('SETTINGS not acknowledged'), NGHTTP2_SETTINGS_TIMEOUT), s.settingsTimeoutMs);
    session.once('localSettings', () => clearTimeout(settingsTimer));
    session.once('close', () => {
      clearTimeout(settingsTimer);
      this.sessions.delete(session);
    });
    // Idle: no frame either way for keepAliveTimeout. node's session timer fires once per quiet
    // period; with streams still open (a slow origin) the connection stays, as an HTTP/1
    // connection with a request in flight does, and the wait starts again when the last ends.
    session.on('timeout', () => {
      if (use.open === 0) session.close();
      else use.idle = true;
    });
    session.setTimeout(s.idleMs);
    session.on('stream', (stream) => {
      use.open++;
      stream.once('close', () => {
        if (--use.open > 0 || !use.idle || session.destroyed || session.closed) return;
        use.idle = false;
        session.setTimeout(s.idleMs);
      });
    });
    // A connection that completed its handshake while the port was draining: GOAWAY at once.
    if (this.draining) session.close();
    // RFC 9113 9.2: HTTP/2 needs TLS 1.2 or later; a port that also enables TLS 1.0/1.1 may
    // still negotiate h2 with an old-protocol client (9.2.1: INADEQUATE_SECURITY).
    const version = (session.socket as Partial<TLSSocket>).getProtocol?.();
    if (version === 'TLSv1' || version === 'TLSv1.1') session.destroy(new Error(`HTTP/2 over ${version}`), NGHTTP2_INADEQUATE_SECURITY);
  }

  /** A connection whose protocol is HTTP/2 (ALPN `h2`, or the h2c preface on a plain port). */
  adopt(socket: Socket): void {
    // node starts a session on a TLS socket only once it stops "connecting", which a server-side
    // socket made outside a tls.Server never does ('secureConnect' is a client event): the
    // handshake is done when this is called.
    (socket as Socket & { secureConnecting?: boolean }).secureConnecting = false;
    this.server.emit('connection', socket);
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
    for (const use of this.sessions.values()) if (use.open > 0) n++;
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
