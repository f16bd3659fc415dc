// The listening sockets of an RT worker, apart from worker.ts, which builds the hosts they serve:
// the plain and TLS service ports of the running setting, the h2c of the plain ones, and the
// worker's internal (sibling) port. A reload keeps the sockets it still wants (the new limits
// and certificates apply to the next connections), opens the new ones, and drains those it no
// longer wants only when every wanted one opened: a refused setting is rolled back by the
// primary, and meanwhile no port it would have closed refuses a connection.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Setting } from '../setting/types.js';
import type { TlsHostStatus } from '../ipc/messages.js';
import { sendError } from '../pipeline/parts/respond.js';
import { listenKey, type Listen } from '../routing/vhost-table.js';
import { ServiceServer, type ServerTimeouts } from './service-server.js';
import { TlsServiceServer } from './tls-server.js';
import type { H2Settings } from './h2-server.js';
import { CleartextH2 } from './h2c.js';
import type { TlsPort } from './tls/sni.js';
import { tlsKey, tlsStatus } from './tls/status.js';
import type { Stapler } from './tls/stapling.js';
import type { Listener } from './listen-handle.js';

/** Serves a request that arrived on a service port (`port`) or on the internal one (undefined). */
type Handle = (req: IncomingMessage, res: ServerResponse, port: number | undefined) => void;

/** The limits and HTTP/2 settings of frontEnd, as the servers take them. */
export function serverOptions(frontEnd: Setting['functions']['network']['http']['frontEnd']): { timeouts: ServerTimeouts; h2: H2Settings } {
  const h2 = frontEnd.http2;
  return {
    h2: {
      enable: h2.enable, cleartext: h2.cleartext, maxConcurrentStreams: h2.maxConcurrentStreams, maxHeaderListSize: h2.maxHeaderListSize,
      initialWindowSize: h2.initialWindowSize, settingsTimeoutMs: h2.settingsTimeout * 1000, idleMs: frontEnd.keepAliveTimeout * 1000,
      maxHeaderCount: frontEnd.maxHeaderCount,
    },
    timeouts: {
      keepAliveMs: frontEnd.keepAliveTimeout * 1000,
      headersMs: frontEnd.headersTimeout * 1000,
      requestMs: frontEnd.requestTimeout * 1000,
      // The parser's limit covers the request line too; the handler applies the two limits apart
      // (414 for the URL, 431 for the fields).
      maxHeaderSize: frontEnd.maxHeaderSize + frontEnd.maxUrlLength + 1024,
    },
  };
}

export class Listeners {
  /** Listening sockets by listenKey (plain) or `tls ` + listenKey. */
  private readonly servers = new Map<string, ServiceServer | TlsServiceServer>();
  private internal: ServiceServer | undefined;
  /** HTTP/2 cleartext (h2c) of the plain service ports that ever had it on. */
  private readonly h2c = new Map<ServiceServer, CleartextH2>();
  /** The TLS sockets of the running setting, and the errors of those that could not be opened. */
  private tlsPorts: TlsPort[] = [];
  private readonly tlsFailed = new Map<string, string>();
  /** Session ticket keys: the primary's (shared by every worker) once they arrive. */
  private ticketKeys: Buffer = randomBytes(48);

  /**
   * `trusts`: whether a request on the internal port carries this start's sibling secret.
   * `listener`: where listening sockets come from (the supervisor's, in the node).
   */
  constructor(
    private readonly index: number, private readonly handle: Handle, private readonly trusts: (req: IncomingMessage) => boolean,
    private readonly listener: Listener, private readonly stapler: Stapler,
  ) {}

  /** Opens what a setting listens on; resolves to the sockets that could not be opened. */
  async open(listens: Listen[], tlsPorts: TlsPort[], basePort: number, t: ServerTimeouts, h2: H2Settings): Promise<string[]> {
    const wanted = new Map<string, Listen | TlsPort>(listens.map((l) => [listenKey(l), l]));
    for (const p of tlsPorts) wanted.set(tlsKey(p), p);
    const failures: string[] = [];
    this.tlsPorts = tlsPorts;
    this.tlsFailed.clear();
    for (const [key, l] of wanted) {
      const running = this.servers.get(key);
      if (running instanceof TlsServiceServer) {
        // New certificates and options for the next handshakes; open connections go on.
        running.update(l as TlsPort, t, h2);
        retime(running.http1, t);
      } else if (running !== undefined) {
        retime(running, t);
        this.cleartext(running, (l as Listen).port, t, h2);
      } else if ('options' in l) {
        await this.openTls(key, l, t, h2);
      } else {
        await this.openPlain(key, l, t, h2, failures);
      }
    }
    // A refused setting is rolled back by the primary: the sockets it would have closed stay
    // open meanwhile, so their ports never refuse a connection.
    if (failures.length === 0) this.closeUnwanted(wanted);
    await this.openInternal(basePort, t, failures);
    return failures;
  }

  private async openTls(key: string, l: TlsPort, t: ServerTimeouts, h2: H2Settings): Promise<void> {
    const port = l.listen.port;
    const s = new TlsServiceServer((req: IncomingMessage, res: ServerResponse) => this.handle(req, res, port), t, l, h2, this.ticketKeys, this.stapler);
    try {
      await s.listen(this.listener, l.listen.host, port);
      this.servers.set(key, s);
    } catch (err) {
      // Not a refusal of the setting: the plain service goes on, /get/https says why this
      // host's HTTPS does not work (tlsStatus), and the next reload tries the port again.
      this.tlsFailed.set(key, (err as Error).message);
    }
  }

  private async openPlain(key: string, l: Listen, t: ServerTimeouts, h2: H2Settings, failures: string[]): Promise<void> {
    const s = this.serverFor(l.port, t);
    try {
      await s.listen(this.listener, l.host, l.port);
      this.servers.set(key, s);
      this.cleartext(s, l.port, t, h2);
    } catch (err) {
      failures.push(`${key} (hosting[].listen): ${(err as Error).message}`);
    }
  }

  private closeUnwanted(wanted: Map<string, unknown>): void {
    for (const [key, s] of this.servers) {
      if (wanted.has(key)) continue;
      this.servers.delete(key);
      void s.drain(30_000);
      if (s instanceof ServiceServer) void this.h2c.get(s)?.drain(30_000);
    }
  }

  /** The internal (sibling) port, opened at the first setting and kept, with the new limits. */
  private async openInternal(basePort: number, t: ServerTimeouts, failures: string[]): Promise<void> {
    if (this.internal !== undefined) {
      retime(this.internal, t);
      return;
    }
    const s = this.serverFor(undefined, t);
    try {
      await s.listen(this.listener, '127.0.0.1', basePort + this.index);
      this.internal = s;
    } catch (err) {
      failures.push(`internal 127.0.0.1:${basePort + this.index} (env.management.cluster.meta.baseHostingPort + worker ${this.index}): ${(err as Error).message}`);
    }
  }

  private serverFor(port: number | undefined, t: ServerTimeouts): ServiceServer {
    if (port !== undefined) return new ServiceServer((req: IncomingMessage, res: ServerResponse) => this.handle(req, res, port), t);
    // The internal (sibling) port: any local process can connect to it, and what arrives there
    // is trusted as a sibling's hand-off (its X-Forwarded-For, no further hand-off). Only a
    // request with this start's secret is one of ours.
    return new ServiceServer((req: IncomingMessage, res: ServerResponse) => {
      if (!this.trusts(req)) { sendError(res, 403, undefined, true); return; }
      this.handle(req, res, undefined);
    }, t, false);
  }

  /** frontEnd.http2.cleartext on a plain port: created the first time it is on, switched by reloads. */
  private cleartext(s: ServiceServer, port: number, t: ServerTimeouts, h2: H2Settings): void {
    let c = this.h2c.get(s);
    if (c === undefined) {
      if (!h2.cleartext) return;
      c = new CleartextH2(s.server, (req: IncomingMessage, res: ServerResponse) => this.handle(req, res, port), h2);
      this.h2c.set(s, c);
    }
    c.update(h2, t.headersMs);
  }

  /** Connections serving a request now, HTTP/2 sessions included (a gauge of document 1). */
  busy(): number {
    let n = 0;
    for (const s of this.servers.values()) n += s.busy;
    for (const c of this.h2c.values()) n += c.h2.busy;
    return n;
  }

  /** Per TLS host: null when served, else why not (`/get/https`). */
  tlsStatus(): TlsHostStatus {
    return tlsStatus(this.tlsPorts, this.tlsFailed);
  }

  setTicketKeys(keys: Buffer): void {
    this.ticketKeys = keys;
    for (const s of this.servers.values()) if (s instanceof TlsServiceServer) s.setTicketKeys(keys);
  }

  async drain(timeoutMs: number): Promise<void> {
    const all: Array<{ drain(ms: number): Promise<void> }> = [...this.servers.values(), ...this.h2c.values()];
    if (this.internal) all.push(this.internal);
    await Promise.all(all.map((s) => s.drain(timeoutMs)));
  }
}

/**
 * A listening socket kept across a reload takes the new frontEnd limits: node:http reads these
 * server members for every new connection, request and keep-alive wait, so they apply at once.
 * (The check interval of slow heads, set at creation, stays.)
 */
function retime(s: ServiceServer, t: ServerTimeouts): void {
  s.server.headersTimeout = t.headersMs;
  s.server.requestTimeout = t.requestMs;
  s.keepAliveMs = t.keepAliveMs;
  (s.server as { maxHeaderSize?: number }).maxHeaderSize = t.maxHeaderSize;
}
