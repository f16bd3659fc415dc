// env.management.cluster.discover: the primary announces this node on UDP every `period`
// seconds (broadcast on each IPv4 interface when `members` is null, unicast to the listed nodes
// otherwise), hears the others' signed advertisements (advertisement.ts), and lists them for
// `/get/discover`; a node silent for SILENT_PERIODS periods is dropped, and this node is never
// listed. Each datagram is signed for the address it is sent from and carries a sequence that
// grows (advertisement.ts): one from another address, or with a sequence not above the last
// accepted from its address, is refused. Refusals are logged within a bound for the whole node
// (refusal-log.ts). Nothing here is on a request path.
import dgram from 'node:dgram';
import os from 'node:os';
import type { DiscoverEntry } from '../../query/evaluate.js';
import { parseMember } from '../../setting/schema/formats.js';
import type { Setting } from '../../setting/types.js';
import { decodeAdvertisement, encodeAdvertisement, MAX_SKEW_MS, type Advertised } from './advertisement.js';
import { plainIp } from './own-addresses.js';
import { RefusalLog } from './refusal-log.js';

const SILENT_PERIODS = 3;
/**
 * How long the last sequence of an address is kept: an advertisement accepted now may carry a
 * time up to MAX_SKEW_MS ahead, and is refused by its time MAX_SKEW_MS after that. A node whose
 * clock went back at a restart is heard again once this passed without an accepted one.
 */
const SEQ_MEMORY_MS = 2 * MAX_SKEW_MS;

export interface DiscoveryDeps {
  setting(): Setting;
  /** What this node advertises now (its setting hash changes with the setting). */
  advertised(): Advertised;
  info(message: string, fields: Record<string, unknown>): void;
  now?(): number;
  /** Where a broadcast goes; default: the directed broadcast address of each IPv4 interface. */
  broadcastTargets?(): string[];
}

/** Directed broadcast address (address | ~netmask) of every IPv4 interface that has one, to the interface's address. */
function interfaceBroadcasts(onlyAddress?: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family !== 'IPv4' || a.internal) continue;
      if (onlyAddress !== undefined && a.address !== onlyAddress) continue;
      const ip = a.address.split('.').map(Number);
      const mask = a.netmask.split('.').map(Number);
      const broadcast = ip.map((b, i) => (b | (~mask[i]! & 255)) & 255).join('.');
      if (!out.has(broadcast)) out.set(broadcast, a.address);
    }
  }
  return out;
}

/** The address the kernel sends from to `ip:port` (a connected UDP socket's local address). */
async function routeSource(ip: string, port: number): Promise<string> {
  const probe = dgram.createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.connect(port, ip, () => resolve());
    });
    return probe.address().address;
  } finally {
    probe.close();
  }
}

export class Discovery {
  private socket: dgram.Socket | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly heard = new Map<string, DiscoverEntry>();
  /** The last sequence accepted from each address, and when. */
  private readonly lastSeq = new Map<string, { seq: number; at: number }>();
  private seq = 0;
  private readonly now: () => number;
  private readonly refusals: RefusalLog;

  constructor(private readonly deps: DiscoveryDeps) {
    this.now = deps.now ?? Date.now;
    this.refusals = new RefusalLog(deps.info, this.now);
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
    void this.announce();
    this.timer = setInterval(() => void this.announce(), c.period * 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.refusals.flush();
    this.socket?.close();
    this.socket = undefined;
  }

  /** Where this period's advertisement goes: `ip:port` pairs. */
  targets(): Array<{ ip: string; port: number }> {
    const c = this.conf;
    if (c.members === null) {
      const list = this.deps.broadcastTargets?.() ?? [...interfaceBroadcasts(c.listen === '0.0.0.0' ? undefined : c.listen).keys()];
      return list.map((ip) => ({ ip, port: c.port }));
    }
    return c.members.flatMap((m) => {
      const p = parseMember(m); // cloud forms are refused at validation (fleet-check.ts)
      return p === undefined || p.ip.includes(':') ? [] : [{ ip: p.ip, port: p.port ?? c.port }];
    });
  }

  /**
   * The address a datagram to `ip:port` leaves from, which its signature names: the bound
   * address, else the interface's own for its broadcast address, else the kernel's route.
   */
  private async sourceFor(ip: string, port: number): Promise<string> {
    const listen = this.conf.listen;
    if (listen !== '0.0.0.0') return listen;
    return interfaceBroadcasts().get(ip) ?? routeSource(ip, port);
  }

  /** Sends this period's advertisement to each target, signed for the address it leaves from. */
  async announce(): Promise<void> {
    const socket = this.socket;
    if (socket === undefined) return;
    const advertised = this.deps.advertised();
    // Grows with each period, and across a restart with the clock.
    this.seq = Math.max(this.seq + 1, this.now());
    const binding = { seq: this.seq, time: this.now() };
    const signed = new Map<string, Buffer>();
    for (const t of this.targets()) {
      const to = `${t.ip}:${t.port}`;
      let address: string;
      try { address = await this.sourceFor(t.ip, t.port); } catch (err) {
        this.deps.info('discovery advertisement not sent', { to, reason: `no source address: ${(err as Error).message}` });
        continue;
      }
      if (this.socket !== socket) return; // stopped meanwhile: a closed socket throws on send
      let data = signed.get(address);
      if (data === undefined) signed.set(address, data = encodeAdvertisement(this.conf.secret, advertised, { address, ...binding }));
      socket.send(data, t.port, t.ip, (err) => {
        if (err) this.deps.info('discovery advertisement not sent', { to, reason: err.message });
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
    const a = decodeAdvertisement(this.conf.secret, msg, address, now);
    if ('refused' in a) {
      this.refusals.refused(address, a.refused);
      return;
    }
    const last = this.lastSeq.get(address);
    if (last !== undefined && now - last.at <= SEQ_MEMORY_MS && a.seq <= last.seq) {
      this.refusals.refused(address, `replayed: sequence ${a.seq} is not above ${last.seq}`);
      return;
    }
    this.lastSeq.set(address, { seq: a.seq, at: now });
    // Only advertisements signed for their own address get here: the fleet's nodes.
    if (this.lastSeq.size > 1024) for (const [k, v] of this.lastSeq) if (now - v.at > SEQ_MEMORY_MS) this.lastSeq.delete(k);
    if (!this.heard.has(address)) this.deps.info('discovery: node heard', { address, name: a.name, version: a.version });
    this.heard.set(address, {
      address,
      advertisement: { signature: a.signature, name: a.name, version: a.version, buildNumber: a.buildNumber, settingHash: a.settingHash },
      lastSeen: now,
    });
  }
}
