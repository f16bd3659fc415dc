// One resolved origin endpoint (configured address + IP): its connection pool and its health.
// An endpoint failing `failCount` times in a row becomes Inactive and is probed with a plain TCP
// connect every `recoveryIntervalMs` until one succeeds. A TCP connect is the probe because it
// is what the failures that exclude an address are about (refused, unreachable, no answer) and
// it costs the origin nothing: no request reaches its logs or its application.
import net from 'node:net';
import { Pool } from 'undici';

type AddressState = 'Active' | 'Inactive';

export interface StateChange {
  address: string;
  ip: string;
  state: AddressState;
  /** Epoch ms of the change. */
  at: number;
  reason: 'failures' | 'probe' | 'answered' | 'reset' | 'expired';
}

/** One recovery probe, for the origin log (document 3: `session-type` `recovery`). */
export interface ProbeRecord {
  address: string;
  ip: string;
  port: number;
  /** Epoch ms when the connect started. */
  at: number;
  /** Connect time in ms (the whole probe when it failed). */
  connectMs: number;
  /** Our side of the connection; undefined when it never connected. */
  localAddress: string | undefined;
  error: 'Connect-Timeout' | 'Server-Close' | undefined;
}

/** What endpoints share with the set that owns them. */
export interface EndpointContext {
  failCount: number;
  recoveryIntervalMs: number;
  connectTimeoutMs: number;
  changed(ep: Endpoint, change: StateChange): void;
  /** An Inactive domain IP outlived its TTL: the owner drops it (DNS brings it back if listed). */
  expired(ep: Endpoint): void;
  /** Each recovery probe once it ended (not one that reset() or close() cut short). */
  probed?(p: ProbeRecord): void;
}

export class Endpoint {
  pool: Pool;
  active = true;
  fails = 0;
  changedAt = Date.now();
  /** Epoch ms at which this IP leaves the set while Inactive; Infinity for configured IPs. */
  removeAt = Infinity;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing: net.Socket | null = null;
  /** `ip:port` (`[ip]:port` for IPv6) as the origin log and the statistics show it. */
  readonly hostPort: string;

  constructor(
    readonly address: string,
    readonly ip: string,
    readonly port: number,
    private readonly origin: string,
    private readonly poolOptions: Pool.Options,
    private readonly ctx: EndpointContext,
  ) {
    this.pool = new Pool(origin, poolOptions);
    this.hostPort = ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
  }

  succeeded(): void {
    if (this.fails !== 0) this.fails = 0;
    // Reached while everything was excluded: the answer is proof enough, no need to wait a probe.
    if (!this.active) this.recover('answered');
  }

  /** Counts one failure; true when it made the endpoint Inactive. */
  failed(inactiveTtlMs: number): boolean {
    this.fails++;
    if (!this.active || this.fails < this.ctx.failCount) return false;
    this.setState(false, 'failures');
    if (inactiveTtlMs !== Infinity) this.removeAt = this.changedAt + inactiveTtlMs;
    this.probeTimer = setInterval(() => this.tick(), this.ctx.recoveryIntervalMs);
    this.probeTimer.unref();
    return true;
  }

  /** Active again, no failure history, and fresh connections (pooled ones may be half dead). */
  reset(): void {
    this.stopProbe();
    this.fails = 0;
    this.removeAt = Infinity;
    const old = this.pool;
    this.pool = new Pool(this.origin, this.poolOptions);
    closeQuietly(old);
    if (!this.active) this.setState(true, 'reset');
  }

  close(): Promise<void> {
    this.stopProbe();
    return closeQuietly(this.pool);
  }

  private recover(reason: 'probe' | 'answered'): void {
    this.stopProbe();
    this.fails = 0;
    this.removeAt = Infinity;
    this.setState(true, reason);
  }

  private setState(active: boolean, reason: StateChange['reason']): void {
    this.active = active;
    this.changedAt = Date.now();
    this.ctx.changed(this, { address: this.address, ip: this.ip, state: active ? 'Active' : 'Inactive', at: this.changedAt, reason });
  }

  private tick(): void {
    if (Date.now() >= this.removeAt) {
      this.stopProbe();
      this.ctx.expired(this);
      return;
    }
    if (this.probing !== null) return;
    const at = Date.now();
    const started = performance.now();
    const sock = net.connect({ host: this.ip, port: this.port });
    this.probing = sock;
    sock.setTimeout(this.ctx.connectTimeoutMs);
    const done = (error: ProbeRecord['error']): void => {
      const localAddress = error === undefined ? sock.localAddress : undefined;
      sock.destroy();
      if (this.probing !== sock) return; // reset() or close() came first
      this.probing = null;
      this.ctx.probed?.({ address: this.address, ip: this.ip, port: this.port, at, connectMs: performance.now() - started, localAddress, error });
      if (error === undefined && !this.active) this.recover('probe');
    };
    sock.once('connect', () => done(undefined));
    // Refused or unreachable: spelled Server-Close as for an exchange (errors.ts has no "refused").
    sock.once('error', () => done('Server-Close'));
    sock.once('timeout', () => done('Connect-Timeout'));
  }

  private stopProbe(): void {
    if (this.probeTimer !== null) clearInterval(this.probeTimer);
    this.probeTimer = null;
    if (this.probing !== null) this.probing.destroy();
    this.probing = null;
  }
}

/**
 * Graceful close lets in-flight responses finish; a body nobody reads would hold it forever,
 * so after a grace period the pool is destroyed.
 */
function closeQuietly(pool: Pool, graceMs = 2000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = setTimeout(() => { pool.destroy().catch(() => undefined).then(resolve, resolve); }, graceMs);
    timer.unref();
  });
  const graceful = pool.close().catch(() => undefined).then(() => clearTimeout(timer));
  return Promise.race([graceful, forced]);
}
