// The node's part in a fleet, in the primary: discovery (discovery.ts), the propagation of
// invalidation calls to the nodelist (propagation.ts) and the Redis invalidation bus (bus.ts).
// The management API tells it of each invalidation call it accepted, the workers of each PURGE
// they accepted; both before the invalidation runs here.
import { createHash } from 'node:crypto';
import type { RecognizedInvalidation } from '../../manager/types.js';
import type { PurgeCall } from '../../ipc/messages.js';
import type { Setting } from '../../setting/types.js';
import { parseListen } from '../../setting/schema/formats.js';
import { InvalidationBus } from './bus.js';
import type { BusFigures } from '../../stats/realtime-view.js';
import type { BusEntry } from './bus-entry.js';
import { Discovery } from './discovery.js';
import { ownAddresses } from './own-addresses.js';
import { PROPAGATED_HEADER, Propagation } from './propagation.js';
import type { Advertised } from './advertisement.js';
import type { DiscoverEntry } from '../../query/evaluate.js';

export interface FleetDeps {
  setting(): Setting;
  /** The running setting.json as text (its hash is advertised). */
  settingText(): string;
  /** The node name and product version advertised. */
  name: string;
  version: string;
  /** Where the management API's plain port is bound (an own address when it is not 0.0.0.0). */
  apiHost(): string | undefined;
  /** Runs a bus entry on this node. */
  apply(entry: BusEntry): Promise<void>;
  info(message: string, fields: Record<string, unknown>): void;
  error(message: string, fields: Record<string, unknown>): void;
}

/** The addresses the hosts' service ports are bound to (not the wildcard ones). */
function serviceAddresses(s: Setting): string[] {
  return s.hosting.flatMap((h) => {
    const l = typeof h.listen === 'string' ? parseListen(h.listen) : undefined;
    return l?.host === undefined || l.host === null ? [] : [l.host];
  });
}

/** `1.2.3+456` gives `456`; a version without build metadata gives `0`. */
function buildNumberOf(version: string): string {
  const i = version.indexOf('+');
  return i < 0 ? '0' : version.slice(i + 1);
}

export class Fleet {
  readonly discovery: Discovery;
  private readonly propagation: Propagation;
  private bus: InvalidationBus | undefined;
  private hashFor: string | undefined;
  private hash = '';

  constructor(private readonly deps: FleetDeps) {
    this.discovery = new Discovery({ setting: deps.setting, advertised: () => this.advertised(), info: deps.info });
    this.propagation = new Propagation({
      setting: deps.setting, info: deps.info,
      own: () => ownAddresses([deps.apiHost(), deps.setting().env.management.cluster.discover.listen, ...serviceAddresses(deps.setting())]),
    });
  }

  private advertised(): Advertised {
    const text = this.deps.settingText();
    if (text !== this.hashFor) {
      this.hash = createHash('sha256').update(text).digest('hex');
      this.hashFor = text;
    }
    return { name: this.deps.name, version: this.deps.version, buildNumber: buildNumberOf(this.deps.version), settingHash: this.hash };
  }

  /**
   * Starts discovery and the bus; resolves when the node may serve: the bus caught up with the
   * stream, or startTimeout passed (logged; the catch-up goes on). `cacheReady` resolves once a
   * worker can run invalidations.
   */
  async start(cacheReady: Promise<void>): Promise<void> {
    await this.discovery.start();
    const conf = this.deps.setting().env.management.cluster.bus;
    if (!conf.enable) return;
    await cacheReady;
    const bus = new InvalidationBus({ setting: this.deps.setting, apply: this.deps.apply, info: this.deps.info, error: this.deps.error });
    this.bus = bus;
    void bus.run();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((r) => { timer = setTimeout(() => r(true), conf.startTimeout * 1000); });
    const timedOut = await Promise.race([bus.caughtUp.then(() => false), late]);
    clearTimeout(timer);
    if (timedOut) this.deps.error('invalidation bus: not caught up at start; serving anyway (copies invalidated elsewhere may be served until it catches up)', { waitedSeconds: conf.startTimeout });
  }

  /** An invalidation call the management API accepted. */
  recognized(call: RecognizedInvalidation): void {
    const r = call.request;
    this.propagation.forward({ method: r.method, target: r.rawQuery ? `${r.path}?${r.rawQuery}` : r.path, headers: r.headers, body: r.body });
    // A propagated call was appended by the node that received it first.
    if (r.headers[PROPAGATED_HEADER] === undefined) {
      this.bus?.append({ kind: call.kind, targets: call.targets.filter((t) => t.derived !== true).map((t) => ({ vhost: t.vhost, text: t.text, ...(t.tag === undefined ? {} : { tag: t.tag }) })), ...(call.sec === undefined ? {} : { sec: call.sec }) });
    }
  }

  /** A PURGE a worker accepted on a service port. */
  purgeRecognized(call: PurgeCall): void {
    this.propagation.forward({ method: 'PURGE', target: call.target, headers: call.headers, servicePort: call.port });
  }

  nodes(): DiscoverEntry[] {
    return this.discovery.list();
  }

  busFigures(): BusFigures | undefined {
    return this.bus?.figures();
  }

  stop(): void {
    this.discovery.stop();
    this.bus?.stop();
  }
}
