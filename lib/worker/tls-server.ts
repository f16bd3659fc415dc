// A TLS service socket. node:tls terminates TLS and picks the certificate by SNI (sni.ts); each
// connection is then handed, after its handshake, to a ServiceServer that never listens itself,
// so HTTP/1.1 over TLS runs the very same parser settings, timeouts, client-error answers,
// connection tracking and drain as the plain ports. (node:https would be the same http
// connection listener, but behind a server whose 'connection' sockets are the raw TCP ones,
// which the tracking of ServiceServer cannot pair with its requests.)
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { ServiceServer, type ServerTimeouts } from './service-server.js';
import { SniContexts, type TlsPort } from './tls/sni.js';

export class TlsServiceServer {
  readonly server: tls.Server;
  /** The HTTP/1.1 side; exposed so a reload can retime it like a plain server. */
  readonly http1: ServiceServer;
  private sni: SniContexts;

  constructor(handler: (req: IncomingMessage, res: ServerResponse) => void, t: ServerTimeouts, port: TlsPort) {
    this.http1 = new ServiceServer(handler, t);
    this.http1.serveHandedOver();
    this.sni = new SniContexts(port);
    const self = this;
    this.server = tls.createServer({
      ...this.sni.defaultOptions,
      // ALPN: a client that offers only h2 is refused in the handshake (no_application_protocol)
      // rather than getting HTTP/1.1 bytes it would not read.
      ALPNProtocols: ['http/1.1'],
      // A handshake is bounded like a request head.
      handshakeTimeout: t.headersMs,
      // node calls the callback as a method of the TLS socket: its local address decides between
      // the hosts bound to one address and the `*` hosts of the port.
      SNICallback(this: unknown, servername: string, cb: (err: Error | null, ctx?: tls.SecureContext) => void) {
        const local = (this as net.Socket | undefined)?.localAddress;
        cb(null, self.sni.find(servername, local));
      },
    }, (socket: tls.TLSSocket) => this.http1.adopt(socket));
    // A failed handshake (no shared version or suite, timeout, reset) is the client's: node
    // destroys the socket; nothing to answer at the HTTP level.
    this.server.on('tlsClientError', () => undefined);
  }

  /**
   * New certificates or options for the next handshakes; connections already open keep the
   * context they negotiated and go on (a certificate swap drops nothing).
   */
  update(port: TlsPort): void {
    const sni = new SniContexts(port);
    this.server.setSecureContext(sni.defaultOptions);
    this.sni = sni;
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
    return this.http1.connections;
  }

  /** Stops accepting, then drains the HTTP side as a plain server does. */
  async drain(timeoutMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.http1.drain(timeoutMs);
    await closed;
  }
}
