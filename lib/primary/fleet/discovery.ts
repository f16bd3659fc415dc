// env.management.cluster.discover: the primary announces this node on UDP every `period`
// seconds (broadcast on each IPv4 interface when `members` is null, unicast to the listed nodes
// otherwise), hears the others' signed advertisements (advertisement.ts), and lists them for
// `/get/discover`; a node silent for SILENT_PERIODS periods is dropped, and this node is never
// listed. Nothing here is on a request path.
import dgram from 'node:dgram';
import os from 'node:os';
import type { DiscoverEntry } from '../../query/evaluate.js';
import { parseMember } from '../../setting/schema/formats.js';
import type { Setting } from '../../setting/types.js';
import { decodeAdvertisement, encodeAdvertisement, type Advertised } from './advertisement.js';
import { plainIp } from './own-addresses.js';

const SILENT_PERIODS = 3;
/** At most one info line per source address and this span for refused advertisements (a flood stays one line). */
const REFUSAL_LOG_MS = 60_000;

export interface DiscoveryDeps {
  setting(): Setting;
  /** What this node advertises now (its setting hash changes with the setting). */
  advertised(): Advertised;
  info(message: string, fields: Record<string, unknown>): void;
  now?(): number;
  /** Where a broadcast goes; default: the directed broadcast address of each IPv4 interface. */
  broadcastTargets?(): string[];
}

/** Directed broadcast address (address | ~netmask) of every IPv4 interface that has one. */
function interfaceBroadcasts(onlyAddress?: string): string[] {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family !== 'IPv4' || a.internal) continue;
      if (onlyAddress !== undefined && a.address !== onlyAddress) continue;
      const ip = a.address.split('.').map(Number);
      const mask = a.netmask.split('.').map(Number);
      out.add(ip.map((b, i) => (b | (~mask[i]! & 255)) & 255).join('.'));
    }
  }
  return [...out];
}

export class Discovery {
  private socket: dgram.Socket | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly heard = new Map<string, DiscoverEntry>();
  private readonly refusals = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly deps: DiscoveryDeps) {
    this.now = deps.now ?? Date.now;
  }

  private get conf(): Setting['env']['management']['cluster']['discover'] {
    return this.deps.setting().env.management.cluster.discover;
  }

  /** Binds and starts announcing; a port that cannot be bound is logged and discovery stays off. */
  async start(): Promise<void> {
    const c = this.conf;
    if (!c.enable) return;
    const socket = dgram.createSocket({ type: 'udp4', reuseAddr: false });
    socket.on('message', (msg, rinfo) => this.onMessage(msg, rinfo.address));
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(c.port, c.listen, () => { socket.off('error', reject); resolve(); });
      });
    } catch (err) {
      socket.close();
      this.deps.info('discovery is off: its port cannot be bound', { listen: `${c.listen}:${c.port}`, reason: (err as Error).message });
      return;
    }
    socket.on('error', (err) => this.deps.info('discovery socket error', { reason: err.message }));
    if (c.members === null) socket.setBroadcast(true);
    this.socket = socket;
    this.deps.info('discovery started', { listen: `${c.listen}:${c.port}`, mode: c.members === null ? 'broadcast' : 'unicast', periodSeconds: c.period });
    this.announce();
    this.timer = setInterval(() => this.announce(), c.period * 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.socket?.close();
    this.socket = undefined;
  }

  /** Where this period's advertisement goes: `ip:port` pairs. */
  targets(): Array<{ ip: string; port: number }> {
    const c = this.conf;
    if (c.members === null) {
      const list = this.deps.broadcastTargets?.() ?? interfaceBroadcasts(c.listen === '0.0.0.0' ? undefined : c.listen);
      return list.map((ip) => ({ ip, port: c.port }));
    }
    return c.members.flatMap((m) => {
      const p = parseMember(m); // cloud forms are refused at validation (fleet-check.ts)
      return p === undefined || p.ip.includes(':') ? [] : [{ ip: p.ip, port: p.port ?? c.port }];
    });
  }

  announce(): void {
    const socket = this.socket;
    if (socket === undefined) return;
    const data = encodeAdvertisement(this.conf.secret, this.deps.advertised(), this.now());
    for (const t of this.targets()) {
      socket.send(data, t.port, t.ip, (err) => {
        if (err) this.deps.info('discovery advertisement not sent', { to: `${t.ip}:${t.port}`, reason: err.message });
      });
    }
  }

  /** The nodes heard within SILENT_PERIODS periods, by address. */
  list(): DiscoverEntry[] {
    const oldest = this.now() - SILENT_PERIODS * this.conf.period * 1000;
    for (const [k, e] of this.heard) if (e.lastSeen < oldest) this.heard.delete(k);
    return [...this.heard.values()];
  }

  private isSelf(address: string): boolean {
    const c = this.conf;
    if (c.listen !== '0.0.0.0') return address === c.listen;
    return Object.values(os.networkInterfaces()).some((l) => (l ?? []).some((a) => plainIp(a.address) === address));
  }

  onMessage(msg: Buffer, from: string): void {
    const address = plainIp(from);
    if (this.isSelf(address)) return;
    const now = this.now();
    const a = decodeAdvertisement(this.conf.secret, msg, now);
    if ('refused' in a) {
      const last = this.refusals.get(address);
      if (this.refusals.size > 1024) for (const [k, t] of this.refusals) if (now - t >= REFUSAL_LOG_MS) this.refusals.delete(k);
      if (last === undefined || now - last >= REFUSAL_LOG_MS) {
        this.refusals.set(address, now);
        this.deps.info('discovery advertisement refused', { from: address, reason: a.refused });
      }
      return;
    }
    if (!this.heard.has(address)) this.deps.info('discovery: node heard', { address, name: a.name, version: a.version });
    this.heard.set(address, {
      address,
      advertisement: { signature: a.signature, name: a.name, version: a.version, buildNumber: a.buildNumber, settingHash: a.settingHash },
      lastSeen: now,
    });
  }
}
