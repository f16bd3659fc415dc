// Cleartext HTTP/2 with prior knowledge (h2c, RFC 9113 3.3) on a plain service port, beside
// HTTP/1.x (frontEnd.http2.cleartext, off by default). A connection is HTTP/2 when it opens with
// the client preface; anything else is HTTP/1 and goes to the port's node:http server as before.
// The HTTP/1 `Upgrade: h2c` dance is not offered (RFC 9113 dropped it); such requests are served
// as HTTP/1.1 (service-server.ts ignores Upgrade).
//
// The switch sits on the http server's 'connection' event, so it turns on and off with a reload
// on a port that stays open, and while off it costs nothing: node's own listeners are in place.
// While on, each new connection's first bytes are looked at before the HTTP/1 parser gets them.
import type http from 'node:http';
import type { Server, Socket } from 'node:net';
import { H2Service, type H2Settings } from './h2-server.js';
import { countClientSocket } from './client-sockets.js';
import { markFirstBytesSeen, refuseConnection, spacedRequestLine, versionlessRequestLine } from './client-errors.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

type ConnectionListener = (this: Server, socket: Socket) => void;

export class CleartextH2 {
  readonly h2: H2Service;
  /** node's (and ServiceServer's) 'connection' listeners while the switch is on; null while off. */
  private http1Listeners: ConnectionListener[] | null = null;
  private peekMs = 10_000;

  constructor(private readonly server: Server, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, s: H2Settings) {
    this.h2 = new H2Service(handler, s);
  }

  /** Turns h2c on or off for the next connections, with new limits; `peekMs` bounds the wait for a silent client's first bytes. */
  update(s: H2Settings, peekMs: number): void {
    this.peekMs = peekMs;
    this.h2.update(s);
    if (s.cleartext === (this.http1Listeners !== null)) return;
    const server = this.server;
    if (s.cleartext) {
      const http1 = server.listeners('connection') as ConnectionListener[];
      this.http1Listeners = http1;
      server.removeAllListeners('connection');
      server.on('connection', (socket: Socket) => this.sort(socket, http1));
    } else {
      const http1 = this.http1Listeners!;
      this.http1Listeners = null;
      server.removeAllListeners('connection');
      for (const l of http1) server.on('connection', l);
    }
  }

  /**
   * Reads until the bytes either differ from the preface (HTTP/1: at the first byte for every
   * method but P...) or match all of it, then gives them back to the socket for the protocol
   * that takes it. A client that says nothing for `peekMs` goes to HTTP/1, whose timeouts apply.
   */
  private sort(socket: Socket, http1: ConnectionListener[]): void {
    countClientSocket(socket);
    let buf: Buffer = Buffer.alloc(0);
    const decide = (isH2: boolean): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      // Paused with the bytes back in front: the next owner reads them first (node:http2 takes
      // what a socket already holds when its session starts).
      socket.pause();
      // An HTTP/0.9 request line (no version) is refused at once, as on a port without h2c: the
      // HTTP/1 parser would wait for fields a 0.9 client never sends, until the head timeout. So
      // is one with more than one SP between its parts. The plain port sees both in the parser's
      // first read (service-server.ts), which these bytes do not come through.
      if (!isH2 && (versionlessRequestLine(buf) || spacedRequestLine(buf))) { refuseConnection(socket, 400, buf); return; }
      socket.off('error', onError);
      if (buf.length > 0) socket.unshift(buf);
      if (isH2) { this.h2.adopt(socket); return; }
      markFirstBytesSeen(socket);
      for (const l of http1) l.call(this.server, socket);
      socket.resume();
    };
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const n = Math.min(buf.length, PREFACE.length);
      const match = buf.compare(PREFACE, 0, n, 0, n) === 0;
      if (match && buf.length < PREFACE.length) return;
      decide(match);
    };
    const onError = (): void => { clearTimeout(timer); socket.destroy(); };
    const onClose = (): void => clearTimeout(timer);
    const timer = setTimeout(() => decide(false), this.peekMs);
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', onClose);
  }

  get connections(): number {
    return this.h2.connections;
  }

  drain(timeoutMs: number): Promise<void> {
    return this.h2.drain(timeoutMs);
  }
}
