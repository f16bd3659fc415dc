// The origin of one virtual host: its configured addresses (address, then address2), their
// resolved endpoints with pools and health, and the request path with failover.
//
// Hot path: the endpoints of all addresses sit in one flat list (primaries first) with a
// precomputed "next Active index" table, rebuilt only when a state or a DNS answer changes. A
// request reads `first`, and on a failure `next[i]`: no scan, no allocation besides the undici
// options and the answer object. IP-only origins never touch DNS code on a request.
import type { Pool } from 'undici';
import { isIP } from 'node:net';
import { originHostHeader, parseOriginAddress, poolOrigin, type OriginAddressParts } from './address.js';
import { OriginCall } from './dispatch.js';
import { resolveDomain } from './dns.js';
import { dnsError, OriginError } from './errors.js';
import { Endpoint, type EndpointContext, type StateChange } from './health.js';
import type { OriginHandler, OriginOptions, OriginRequest, OriginResponse, OriginStatus } from './types.js';
import type { View } from './walk.js';

/** Wait before asking DNS again after a failed resolution. */
const DNS_RETRY_MS = 5000;
const HISTORY_MAX = 64;

class ConfiguredAddress {
  readonly hostHeader: string;
  endpoints: Endpoint[] = [];
  // Domain addresses only:
  expiresAt = 0;
  dnsRetryAt = 0;
  dnsError: unknown = null;
  resolving: Promise<void> | null = null;
  refreshTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly parts: OriginAddressParts,
    readonly secondary: boolean,
    vhost: string,
    readonly poolOptions: Pool.Options,
  ) {
    this.hostHeader = originHostHeader(parts, vhost);
  }
}

export class OriginSet {
  readonly vhost: string;
  private readonly protocol: 'http' | 'https';
  private readonly addrs: ConfiguredAddress[] = [];
  private readonly ctx: EndpointContext;
  private readonly inactiveTtlMs: number | undefined;
  private readonly onDns: OriginOptions['onDns'];
  private readonly onStateChange: OriginOptions['onStateChange'];
  private view: View = { list: [], owners: [], next: new Int32Array(0), first: -1 };
  /** Some domain address has no IP yet and may be resolved now: requests wait for it. */
  private needsDns = false;
  private closed = false;
  /** The latest Active/Inactive changes, newest last. */
  readonly history: StateChange[] = [];

  constructor(o: OriginOptions) {
    this.vhost = o.vhost;
    this.protocol = o.protocol;
    this.inactiveTtlMs = o.inactiveTtlMs;
    this.onDns = o.onDns;
    this.onStateChange = o.onStateChange;
    const connectTimeout = o.connectTimeoutMs ?? 3000;
    const receive = o.receiveTimeoutMs ?? 10000;
    const keepAlive = Math.max(1, o.keepAliveTimeoutMs ?? 60000);
    this.ctx = {
      failCount: Math.max(1, o.failCount ?? 3),
      recoveryIntervalMs: Math.max(10, o.recoveryIntervalMs ?? 5000),
      connectTimeoutMs: connectTimeout,
      changed: (ep, change) => this.changed(ep, change),
      expired: (ep) => this.expired(ep),
      ...(o.onProbe === undefined ? {} : { probed: o.onProbe }),
    };
    const add = (list: string[], secondary: boolean): void => {
      for (const s of list) {
        const parts = parseOriginAddress(s, o.protocol);
        const servername = parts.isIp ? (isIP(o.vhost) === 0 ? o.vhost : undefined) : parts.host;
        const poolOptions: Pool.Options = {
          connections: o.maxConnections || null,
          keepAliveTimeout: keepAlive,
          // Caps the server's Keep-Alive hint too: reuseTimeout is the longest reuse we allow.
          keepAliveMaxTimeout: keepAlive,
          headersTimeout: receive,
          bodyTimeout: receive,
          connectTimeout,
          connect: o.protocol === 'https' && servername !== undefined ? { servername } : undefined,
          // undici 8 negotiates HTTP/2 by ALPN on its own: origins are spoken to in HTTP/1.1 only
          // (hop-by-hop fields, interim answers and the trace's channels are HTTP/1.1 things).
          allowH2: false,
        };
        const addr = new ConfiguredAddress(parts, secondary, o.vhost, poolOptions);
        this.addrs.push(addr);
        if (parts.isIp) addr.endpoints.push(this.endpoint(addr, parts.host));
        else void this.resolve(addr);
      }
    };
    add(o.address, false);
    add(o.address2, true);
    this.rebuild();
  }

  request(r: OriginRequest): Promise<OriginResponse> {
    // The synchronous entry keeps IP-only origins off the DNS code entirely.
    if (this.needsDns) return this.resolveMissing().then(() => this.send(r));
    return this.send(r);
  }

  /**
   * The same request with callbacks instead of a promise and a Readable: the answer's head and
   * body go to `h` straight from the origin client (undici's dispatch), which saves a stream, a
   * promise and an async resource per request on the cache miss path. Failover is the same.
   */
  dispatch(r: OriginRequest, h: OriginHandler): void {
    if (this.needsDns) {
      this.resolveMissing().then(() => this.call(r, h).attempt(), (err: unknown) => h.onError(err));
      return;
    }
    this.call(r, h).attempt();
  }

  /** The dispatch of one request, which is its failover walk too (one object per request). */
  private call(r: OriginRequest, h: OriginHandler): OriginCall {
    return new OriginCall(this.view, r, this.inactiveTtlMs, this.noAnswerOf, h);
  }

  /** Why a request found no address to try (one function for every walk of the set). */
  private readonly noAnswerOf = (): OriginError => this.noAnswer();

  /**
   * request() on the same per-request handler as dispatch(): the answer is the head with its
   * body as a Readable. So every exchange feeds its trace from its own handler (trace.ts), and
   * undici publishes no per-request message for it.
   */
  private send(r: OriginRequest): Promise<OriginResponse> {
    return new Promise((resolve, reject) => {
      this.call(r, {
        onHead: (head, body) => { resolve({ ...head, body: body.readable() }); },
        onError: reject,
      }).attempt();
    });
  }

  /** Why a request found no address to try. */
  private noAnswer(): OriginError {
    const dns = this.addrs.find((a) => a.dnsError !== null);
    if (dns !== undefined) return dnsError(dns.parts.host, dns.dnsError);
    return new OriginError('ORIGIN_CONNECT', 'Server-Close', `virtual host ${this.vhost} has no origin address`);
  }

  /** True when every address (primary and secondary) is Inactive or unresolved. */
  allExcluded(): boolean {
    return this.view.first < 0;
  }

  status(): OriginStatus {
    const now = Date.now();
    const out: OriginStatus = { VirtualHost: this.vhost, Address: [], Address2: [], ActiveIP: [], InactiveIP: [] };
    for (const a of this.addrs) {
      const active = a.endpoints.some((e) => e.active) || (a.endpoints.length === 0 && a.dnsError === null);
      (a.secondary ? out.Address2 : out.Address).push({ [a.parts.raw]: active ? 'Active' : 'Inactive' });
      for (const e of a.endpoints) {
        const until = a.parts.isIp ? now : e.active ? a.expiresAt : Math.min(e.removeAt, now + 86400_000);
        const ttl = Math.max(0, Math.ceil((until - now) / 1000));
        (e.active ? out.ActiveIP : out.InactiveIP).push({ [e.ip]: ttl });
      }
    }
    return out;
  }

  /** `/command/resetorigin`: everything Active, failure counts cleared, new connections. */
  reset(): void {
    for (const a of this.addrs) {
      for (const e of a.endpoints) e.reset();
      a.dnsRetryAt = 0;
    }
    this.rebuild();
  }

  /**
   * Origin connections of this host now: open, carrying an exchange, and the requests queued in
   * the pools for a connection (every one busy at maxConnections). Read once a second.
   */
  sessions(): { open: number; busy: number; queued: number } {
    let open = 0;
    let busy = 0;
    let queued = 0;
    for (const a of this.addrs) {
      for (const e of a.endpoints) {
        const st = e.pool.stats;
        open += st.connected;
        busy += st.connected - st.free;
        queued += st.queued;
      }
    }
    return { open, busy, queued };
  }

  async close(): Promise<void> {
    this.closed = true;
    const closing: Promise<void>[] = [];
    for (const a of this.addrs) {
      if (a.refreshTimer !== null) clearTimeout(a.refreshTimer);
      a.refreshTimer = null;
      for (const e of a.endpoints) closing.push(e.close());
    }
    await Promise.all(closing);
  }

  private endpoint(addr: ConfiguredAddress, ip: string): Endpoint {
    const origin = poolOrigin(this.protocol, ip, addr.parts.port);
    return new Endpoint(addr.parts.raw, ip, addr.parts.port, origin, addr.poolOptions, this.ctx);
  }

  private rebuild(): void {
    const list: Endpoint[] = [];
    const owners: ConfiguredAddress[] = [];
    let needsDns = false;
    const now = Date.now();
    for (const a of this.addrs) {
      for (const e of a.endpoints) { list.push(e); owners.push(a); }
      if (!a.parts.isIp && a.endpoints.length === 0 && now >= a.dnsRetryAt) needsDns = true;
    }
    const next = new Int32Array(list.length);
    let n = -1;
    for (let i = list.length - 1; i >= 0; i--) {
      next[i] = n;
      if (list[i]!.active) n = i;
    }
    this.view = { list, owners, next, first: n };
    this.needsDns = needsDns && !this.closed;
  }

  private changed(_ep: Endpoint, change: StateChange): void {
    this.history.push(change);
    if (this.history.length > HISTORY_MAX) this.history.shift();
    this.rebuild();
    this.onStateChange?.(change);
  }

  private expired(ep: Endpoint): void {
    for (const a of this.addrs) {
      const k = a.endpoints.indexOf(ep);
      if (k < 0) continue;
      a.endpoints = a.endpoints.filter((e) => e !== ep);
      void ep.close();
      this.changed(ep, { address: a.parts.raw, ip: ep.ip, state: 'Inactive', at: Date.now(), reason: 'expired' });
      return;
    }
  }

  private async resolveMissing(): Promise<void> {
    const waits: Promise<void>[] = [];
    const now = Date.now();
    for (const a of this.addrs) {
      if (!a.parts.isIp && a.endpoints.length === 0 && now >= a.dnsRetryAt) waits.push(this.resolve(a));
    }
    await Promise.all(waits);
    // Failed ones moved their retry time forward; recompute so later requests do not wait.
    this.rebuild();
  }

  /** Resolves a domain address; never rejects (the failure is kept on the address). */
  private resolve(a: ConfiguredAddress): Promise<void> {
    a.resolving ??= resolveDomain(a.parts.host, this.onDns).then((res) => {
      a.resolving = null;
      if (this.closed) return;
      a.dnsError = null;
      this.apply(a, res.ips, res.ttl * 1000);
      this.schedule(a, res.ttl * 1000);
    }, (err: unknown) => {
      a.resolving = null;
      if (this.closed) return;
      // Old IPs (if any) keep serving; only an address without IPs reports the DNS failure.
      if (a.endpoints.length === 0) a.dnsError = err;
      a.dnsRetryAt = Date.now() + DNS_RETRY_MS;
      this.schedule(a, DNS_RETRY_MS);
      this.rebuild();
    });
    return a.resolving;
  }

  private schedule(a: ConfiguredAddress, ms: number): void {
    if (a.refreshTimer !== null) clearTimeout(a.refreshTimer);
    a.refreshTimer = setTimeout(() => { a.refreshTimer = null; void this.resolve(a); }, ms);
    a.refreshTimer.unref();
  }

  /** New DNS answer: known IPs keep their pool and health, new ones start Active, gone ones close. */
  private apply(a: ConfiguredAddress, ips: string[], ttlMs: number): void {
    const now = Date.now();
    a.expiresAt = now + ttlMs;
    const kept: Endpoint[] = [];
    for (const ip of ips) {
      const old = a.endpoints.find((e) => e.ip === ip);
      kept.push(old !== undefined && (old.active || now < old.removeAt) ? old : this.endpoint(a, ip));
    }
    for (const e of a.endpoints) if (!kept.includes(e)) void e.close();
    a.endpoints = kept;
    this.rebuild();
  }
}
