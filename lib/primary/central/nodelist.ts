// features.nodelist (deprecated): on each fire of the schedule, the private IPs of the running
// EC2 instances with a matching tag become, for the hosts of `feedback.info.hosting[]`, their
// `origin.address` at run time (the workers swap their origin client; setting.json is not
// touched), and an `api` feedback reports the list. The port and path of a host's first
// configured address are kept on each IP.
import { parseOriginAddress } from '../../origin/address.js';
import { CronRunner, type Clock } from './clock.js';
import { describeInstances, matchingIps, parseTagFilter, type Ec2Connection } from './ec2.js';
import type { InfoLog } from './http.js';
import { feedback, type NodeInfo } from './message.js';
import { sendWithRetry, type Retry } from './retry.js';
import type { Sink } from './transport.js';

/** The listing call has no timeout of its own in the spec. */
const LIST_TIMEOUT_MS = 10_000;

export interface NodeListOptions {
  schedule: string;
  clock: Clock;
  conn: Ec2Connection;
  tag: string;
  /** Hosts whose origin.address follows the list (feedback type `setting`). */
  hosts: string[];
  sink: Sink | undefined;
  /** The host's configured origin (first address and protocol), undefined for an unknown host. */
  configured: (host: string) => { address: string | undefined; protocol: 'http' | 'https' } | undefined;
  /** Hands the new addresses to the workers. */
  apply: (addresses: Record<string, string[]>) => void;
  node: () => NodeInfo;
  log: InfoLog;
  retry: Retry;
}

/** `ip` with the port and path of the configured address. */
function addressFor(ip: string, configured: string | undefined, protocol: 'http' | 'https'): string {
  const host = ip.includes(':') ? `[${ip}]` : ip;
  if (configured === undefined) return host;
  try {
    const p = parseOriginAddress(configured, protocol);
    return `${host}${p.explicitPort ? `:${p.port}` : ''}${p.path}`;
  } catch {
    return host;
  }
}

export class NodeList {
  private readonly runner: CronRunner;
  private last = '';

  constructor(private readonly o: NodeListOptions) {
    this.runner = new CronRunner(o.schedule, o.clock, () => this.run());
  }

  start(): void {
    this.runner.start();
  }

  stop(): void {
    this.runner.stop();
  }

  /** One listing (also run once at the start). */
  async run(): Promise<void> {
    let ips: string[];
    try {
      ips = matchingIps(await describeInstances(this.o.conn, LIST_TIMEOUT_MS, this.o.log), parseTagFilter(this.o.tag));
    } catch (err) {
      this.o.log('central management: node list not refreshed', { error: (err as Error).message });
      return;
    }
    const key = ips.join(',');
    if (key === this.last) return;
    // No instance at all is far likelier a tagging mistake than a wish to serve nothing.
    if (ips.length === 0) {
      this.o.log('central management: node list empty; origin addresses kept', { tag: this.o.tag });
      return;
    }
    this.last = key;
    const updated: Record<string, string[]> = {};
    for (const name of this.o.hosts) {
      const c = this.o.configured(name);
      if (c === undefined) continue;
      updated[name] = ips.map((ip) => addressFor(ip, c.address, c.protocol));
    }
    if (this.o.hosts.length > 0) this.o.apply(updated);
    this.o.log('central management: node list applied', { nodelist: ips, hosts: Object.keys(updated) });
    if (this.o.sink === undefined) return;
    const hosting = Object.entries(updated).map(([name, values]) => ({ name, updated: { field: 'origin.address', values } }));
    await sendWithRetry(this.o.sink, feedback(this.o.node(), this.o.clock.now(), { nodelist: ips, hosting }), this.o.retry);
  }
}
