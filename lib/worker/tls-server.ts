// A TLS service socket. Each connection's ClientHello is read first and its server name picks
// the host's secure context (sni.ts; client-hello.ts says why node's SNICallback is not used),
// then node:tls runs the handshake on that context. ALPN offers `h2` and `http/1.1` (HTTP/1.1
// only when frontEnd.http2.enable is false); a client offering neither, or no ALPN at all, gets
// HTTP/1.1. After the handshake the connection is handed to a server that never listens itself:
// HTTP/1.1 to a ServiceServer, so it runs the very same parser settings, timeouts, client-error
// answers, connection tracking and drain as the plain ports; `h2` to the HTTP/2 side
// (h2-server.ts), whose streams reach the same handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import { H2Service, type H2Settings } from './h2-server.js';
import { ServiceServer, type ServerTimeouts } from './service-server.js';
import { countClientSocket } from './client-sockets.js';
import { helloName, MAX_HELLO } from './tls/client-hello.js';
import { SniContexts, type TlsPort } from './tls/sni.js';
import type { Stapler } from './tls/stapling.js';
import type { Listener } from './listen-handle.js';

export class TlsServiceServer {
  readonly server: net.Server;
  /** The HTTP/1.1 side; exposed so a reload can retime it like a plain server. */
  readonly http1: ServiceServer;
  readonly h2: H2Service;
  private sni: SniContexts;
  private handshakeMs: number;
  private alpn: string[];
  /** Gives the listening socket back (to the supervisor) once this server stops accepting. */
  private release: () => void = () => undefined;

  constructor(handler: (req: IncomingMessage, res: ServerResponse) => void, t: ServerTimeouts, port: TlsPort, h2: H2Settings,
    private ticketKeys: Buffer, private readonly stapler: Stapler) {
    this.http1 = new ServiceServer(handler, t);
    this.http1.serveHandedOver();
    this.h2 = new H2Service(handler, h2);
    this.sni = new SniContexts(port, ticketKeys);
    this.handshakeMs = t.headersMs;
    this.alpn = alpnOf(h2);
    this.server = net.createServer({ noDelay: true }, (raw) => this.accept(raw));
  }

  /** Waits for the ClientHello (bounded like a request head), then starts TLS on its host's context. */
  private accept(raw: Socket): void {
    countClientSocket(raw);
    let buf: Buffer = Buffer.alloc(0);
    // One timer for the ClientHello and the handshake after it.
    const timer = setTimeout(() => raw.destroy(), this.handshakeMs);
    const onError = (): void => { clearTimeout(timer); raw.destroy(); };
    raw.on('error', onError);
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const hello = helloName(buf);
      if (hello === 'more' && buf.length < MAX_HELLO) return;
      raw.off('data', onData);
      raw.pause();
      if (hello === 'not-tls') { onError(); return; }
      raw.unshift(buf);
      const name = hello === 'more' ? undefined : hello.name;
      this.startTls(raw, name, timer, onError);
    };
    raw.on('data', onData);
  }

  private startTls(raw: Socket, name: string | undefined, timer: NodeJS.Timeout, onRawError: () => void): void {
    // A certificate swap takes effect from here: the context is the one current at this handshake.
    const secureContext = this.sni.find(name, raw.localAddress);
    const staple = this.sni.staple(secureContext, this.stapler);
    const socket = new tls.TLSSocket(raw, {
      isServer: true,
      secureContext,
      // The server's order wins: a client offering both gets h2.
      ALPNProtocols: this.alpn,
      ...(staple === undefined ? {} : { server: stapleServer(secureContext, staple) }),
    });
    raw.off('error', onRawError);
    // A failed handshake (no shared version or suite, reset) is the client's: nothing to answer.
    socket.on('error', () => { clearTimeout(timer); socket.destroy(); });
    socket.once('secure', () => {
      clearTimeout(timer);
      if (socket.alpnProtocol === 'h2') this.h2.adopt(socket);
      else this.http1.adopt(socket);
    });
  }

  /**
   * New certificates or options for the next handshakes; connections already open keep the
   * context they negotiated and go on (a certificate swap drops nothing).
   */
  update(port: TlsPort, t: ServerTimeouts, h2: H2Settings): void {
    this.sni = new SniContexts(port, this.ticketKeys);
    this.handshakeMs = t.headersMs;
    this.h2.update(h2);
    this.alpn = alpnOf(h2);
  }

  /** The node's rotated session ticket keys: tickets of either worker resume here. */
  setTicketKeys(keys: Buffer): void {
    this.ticketKeys = keys;
    this.sni.setTicketKeys(keys);
  }

  async listen(listener: Listener, host: string | null, port: number): Promise<void> {
    this.release = await listener(this.server, host, port);
  }

  get connections(): number {
    return this.http1.connections + this.h2.connections;
  }

  get busy(): number {
    return this.http1.busy + this.h2.busy;
  }

  /** Stops accepting, then drains both sides: HTTP/1.1 as a plain server does, HTTP/2 by GOAWAY. */
  async drain(timeoutMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.release();
    await Promise.all([this.http1.drain(timeoutMs), this.h2.drain(timeoutMs)]);
    await closed;
  }
}

/**
 * node staples through a TLS server's 'OCSPRequest' event: a TLSSocket asks its `server` when a
 * client requests the status, with the context in `_sharedCreds`. This stands in for that server
 * (there is none: the socket is made here) and answers with the response fetched beforehand.
 */
function stapleServer(ctx: tls.SecureContext, staple: Buffer): net.Server {
  return {
    _sharedCreds: ctx,
    listenerCount: (event: string) => (event === 'OCSPRequest' ? 1 : 0),
    emit: (event: string, _cert: unknown, _issuer: unknown, done: (err: Error | null, response?: Buffer) => void) => {
      if (event === 'OCSPRequest') done(null, staple);
      return true;
    },
  } as unknown as net.Server;
}

function alpnOf(h2: H2Settings): string[] {
  return h2.enable ? ['h2', 'http/1.1'] : ['http/1.1'];
}
