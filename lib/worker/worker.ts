// An RT worker process: receives the validated setting from the primary over IPC, builds its
// virtual hosts, opens every listening socket (listeners.ts; a duplicate of the socket the
// supervisor holds, which the sibling workers, and the next primary's workers during a restart,
// accept on too: the kernel spreads connections and no primary is on the data path) plus its own
// internal port, and drains on request.
import { HashRing } from '../balance/ring.js';
import { urlIgnoreHashKey } from '../balance/hash-key.js';
import { loadLuaHash, type LuaHash } from '../balance/lua-hash.js';
import { AccessControl } from '../access/access.js';
import type { ControlSource } from './control.js';
import { resolveHosts, resolvePath } from '../setting/resolve.js';
import type { ResolvedHost, Setting } from '../setting/types.js';
import { createHandler, runSteps } from '../pipeline/steps.js';
import type { RuntimeState } from '../pipeline/parts/runtime-state.js';
import { realClock, type Clock } from '../pipeline/parts/clock.js';
import { SessionIds } from '../pipeline/parts/session-ids.js';
import { addOriginSink, addRecordSink } from '../pipeline/finish.js';
import { HostLogWriter } from '../log/host-logs.js';
import { logRefusals } from './refusal-log.js';
import { LogShipper } from '../log/ship.js';
import { PagedeskWiring } from './pagedesk-wiring.js';
import { ownerOf } from './owner.js';
import { buildHostRuntime, cacheFields, facadeOf, sameOrigin, type HostRuntime } from '../pipeline/parts/host-runtime.js';
import { openGeoIp } from '../rules/geoip.js';
import type { CountryLookup } from '../rules/conditions.js';
import { systemLog } from '../log/system-log.js';
import { openCache, type WorkerCache } from './worker-cache.js';
import type { WorkerProbe } from './stats-reporter.js';
import { tlsPlan } from './tls/plan.js';
import type { TlsHostStatus } from '../ipc/messages.js';
import { Stapler } from './tls/stapling.js';
import { Siblings } from '../pipeline/parts/hand-off.js';
import type { Transaction } from '../pipeline/parts/transaction.js';
import { bindDirectly, type Listener } from './listen-handle.js';
import { VhostTable } from '../routing/vhost-table.js';
import { Listeners, serverOptions } from './listeners.js';
import type { Peers } from '../pipeline/parts/context.js';
import { OriginOverrides } from './origin-override.js';
import { QueuedCommands } from '../pipeline/parts/queued-commands.js';

/**
 * The country lookup of env.geoip.path, read when a setting is applied (validation already
 * opened the same files); undefined when not configured or unreadable now.
 */
function geoIpOf(setting: Setting): CountryLookup | undefined {
  const p = setting.env.geoip.path;
  if (p === null) return undefined;
  try {
    return openGeoIp(resolvePath(setting, p)).lookup;
  } catch (err) {
    systemLog.warn({ err: (err as Error).message }, 'GeoIP databases cannot be read');
    return undefined;
  }
}

/** How long the origin client of a removed or rebuilt host stays open after the switch. */
const RETIRE_GRACE_MS = 10_000;

/** The outbound clients a host runtime owns: its origin's, and its hook's. */
function clientsOf(h: HostRuntime): HostRuntime['origin'][] {
  return h.hook === undefined ? [h.origin] : [h.origin, h.hook.client];
}

export class RtWorker {
  private state: RuntimeState | undefined;
  private hosts = new Map<string, HostRuntime>();
  private readonly stapler = new Stapler();
  /** The listening sockets (listeners.ts). */
  private readonly listeners: Listeners;
  private readonly retiring = new Set<HostRuntime['origin']>();
  private siblings: Siblings | undefined;
  private cache: WorkerCache | undefined;
  /**
   * The asynchronous commands waiting in the primary's queue (pre-cache control): kept here, not
   * in the cache, because a starting worker hears them before its first setting opens the cache.
   */
  private readonly prectrl = new QueuedCommands();
  private purgeAccess: AccessControl | undefined;
  private readonly ring = new HashRing();
  private lua: { file: string; hash: LuaHash } | undefined;
  private readonly handle: ReturnType<typeof createHandler>;
  /** The per-host logs of this worker, when a writer was attached (attachLogs). */
  private logs: { writer: HostLogWriter; shipper: LogShipper; remove: (() => void)[] } | undefined;
  private readonly overrides = new OriginOverrides();
  /** The last setting applied, which run-time origin addresses are applied over again. */
  private last: { setting: Setting; baseDir: string } | undefined;

  /**
   * `siblingSecret`: the primary's per-start secret of the sibling ports (see Siblings).
   * `sessionIds`: fed with blocks by the primary; in-process use gets the fallback range only.
   * `peers`: the node's other workers, as invalidations made here reach them.
   * `listener`: where listening sockets come from (the supervisor's, in the node).
   * `clock`: the time the stages read (a stored copy's age and freshness); tests set it.
   */
  constructor(
    readonly index: number, private readonly siblingSecret = '', readonly sessionIds = new SessionIds(), private readonly peers?: Peers,
    listener: Listener = bindDirectly, private readonly clock: Clock = realClock,
  ) {
    this.handle = createHandler(() => this.state!, sessionIds);
    this.listeners = new Listeners(index, this.handle, (req) => this.siblings?.trusts(req) === true, listener, this.stapler);
  }

  /**
   * Builds the hosts of a setting and opens its listeners; resolves to the listening sockets that
   * could not be opened (the primary then rolls every worker back to the running setting).
   * Hosts named in `changedHosts` (all of them for 'all') get a new runtime: a new origin pool
   * and fresh health state; the others keep theirs.
   */
  async apply(setting: Setting, baseDir: string, changedHosts: string[] | 'all' = 'all'): Promise<string[]> {
    const resolved = this.overrides.applyTo(resolveHosts(setting, { baseDir }));
    this.last = { setting, baseDir };
    // Before the hosts: whether their origin exchanges are watched depends on the global logs.
    this.logs?.writer.configureGlobal(setting.env.log);
    const nextHosts = this.nextHosts(setting, resolved, changedHosts);
    const basePort = setting.env.management.cluster.meta.baseHostingPort;
    this.siblings ??= new Siblings(basePort, this.index, this.siblingSecret);
    // The cache is an `env` setting: opened once, kept across reloads (a restart changes it).
    this.cache ??= openCache(setting, this.index, (tx) => this.handOff(tx), () => this.purgeAccess, this.peers, this.clock, this.prectrl);
    try {
      this.purgeAccess = new AccessControl(setting.env.management.api);
    } catch {
      this.purgeAccess = undefined;
    }
    // Certificates are read and checked before anything switches: a bad one refuses the setting.
    const tls = tlsPlan(setting, resolved);
    const table = new VhostTable([...nextHosts.values()], setting.meta.defaultHosting, (h) => tls.listens.get(h.name) ?? []);
    this.state = this.runtimeState(setting, table, this.cache);
    const retired = [...this.hosts.values()].filter((h) => nextHosts.get(h.name)?.origin !== h.origin);
    this.hosts = nextHosts;
    this.logs?.writer.setHosts(nextHosts.values());
    this.stapler.track(tls.staples);
    const { timeouts, h2 } = serverOptions(setting.functions.network.http.frontEnd);
    const failures = await this.listeners.open(table.listens(), tls.ports, basePort, timeouts, h2);
    this.retire(retired);
    return failures;
  }

  /**
   * The runtimes of the enabled hosts: a host not to rebuild whose origin is the same keeps its
   * runtime (its origin pool and health state) with the new rest of its setting.
   */
  private nextHosts(setting: Setting, resolved: ResolvedHost[], changedHosts: string[] | 'all'): Map<string, HostRuntime> {
    const rebuild = changedHosts === 'all' ? undefined : new Set(changedHosts);
    const nextHosts = new Map<string, HostRuntime>();
    const geo = geoIpOf(setting);
    for (const h of resolved) {
      if (!h.enable) continue;
      const old = this.hosts.get(h.name);
      if (old !== undefined && rebuild !== undefined && !rebuild.has(h.name) && sameOrigin(old.setting, h)) {
        nextHosts.set(h.name, { ...old, aliases: h.aliases, listen: h.listen, setting: h, ...cacheFields(h, geo) });
      } else {
        nextHosts.set(h.name, buildHostRuntime(h, geo, this.logs?.writer.dns, this.logs?.writer.probe));
      }
    }
    this.pagedesk.attach(nextHosts.values());
    for (const h of nextHosts.values()) {
      const f = h.setting.mode.facadeHost;
      h.facade = f === null ? undefined : facadeOf(h, nextHosts.get(f));
    }
    return nextHosts;
  }

  /** What the steps read of the setting for every request (RuntimeState). */
  private runtimeState(setting: Setting, table: RuntimeState['table'], cache: WorkerCache): RuntimeState {
    const cluster = setting.env.management.cluster;
    const frontEnd = setting.functions.network.http.frontEnd;
    return {
      table,
      limits: { maxUrlLength: frontEnd.maxUrlLength, maxHeaderSize: frontEnd.maxHeaderSize, maxHeaderCount: frontEnd.maxHeaderCount },
      balance: {
        mode: cluster.balance.mode,
        ring: this.ring,
        hashKey: urlIgnoreHashKey(cluster.balance.urlIgnoreList ?? [], [setting.functions.contents?.pagedesk?.meta?.keyword ?? 'pagedesk']),
        luaHash: this.luaHashFor(setting),
        selfIndex: this.index,
        siblings: this.siblings!,
      },
      serve: cache.stage.serve,
      resume: runSteps,
      traceKeyword: setting.meta.settingTrace.enable ? setting.meta.settingTrace.keyword : undefined,
    };
  }

  /**
   * Origin clients of removed or rebuilt hosts close once requests routed before the switch had
   * time to reach them: a request that was still looking up the cache would otherwise find its
   * origin pool closed (502).
   */
  private retire(retired: HostRuntime[]): void {
    for (const h of retired) {
      for (const o of clientsOf(h)) {
        this.retiring.add(o);
        setTimeout(() => { this.retiring.delete(o); void o.close().catch(() => undefined); }, RETIRE_GRACE_MS).unref();
      }
    }
  }

  /** Run-time origin addresses (features.nodelist): the hosts whose addresses changed get a new origin client. */
  async setOriginAddresses(hosts: Record<string, string[]>): Promise<void> {
    const changed = this.overrides.set(hosts);
    if (changed.length > 0 && this.last !== undefined) await this.apply(this.last.setting, this.last.baseDir, changed);
  }

  /**
   * Content of hosts removed from hosting[]: this worker's memory objects, and with `diskToo` the
   * shared disk objects and index rows (one worker does that part). Fetches of the host still
   * under way are waited for (bounded), so their objects do not land after the deletion.
   */
  async dropHosts(names: string[], diskToo: boolean): Promise<number> {
    const cache = this.cache;
    if (cache === undefined) return 0;
    let n = 0;
    for (const name of names) {
      await Promise.race([cache.stage.settledUnder(name, ''), new Promise((r) => setTimeout(r, 5000).unref())]);
      n += await cache.store.deleteByPrefix(name, '', { diskToo });
    }
    return n;
  }

  /**
   * The Lua hash of balance.luaPath, loaded once per script path: `env` changes need a restart,
   * so a reload never swaps the script (and never re-reads it).
   */
  private luaHashFor(setting: Setting): LuaHash | undefined {
    const { mode, luaPath } = setting.env.management.cluster.balance;
    if (mode !== 'hash' || luaPath === null || luaPath === undefined || luaPath === '') return undefined;
    const file = resolvePath(setting, luaPath);
    if (this.lua?.file !== file) this.lua = { file, hash: loadLuaHash(file) };
    return this.lua.hash;
  }

  /** Hash balance: a miss goes to the URL's owner; false when this worker owns it. */
  private handOff(tx: Transaction): boolean {
    // Behind the hook, its cacheKey is the key: clients mapped to one key meet at one owner.
    const owner = ownerOf(this.state?.balance, this.index, tx.host.name, tx.hook?.cacheKey ?? tx.url);
    if (owner === this.index) return false;
    this.state!.balance.siblings.forward(tx, owner);
    return true;
  }

  /** A pagedesk source through the cache of its owner worker (PagedeskWiring). */
  private readonly pagedesk = new PagedeskWiring((vhost, url, headers, signal) =>
    this.siblings!.fetch(ownerOf(this.state?.balance, this.index, vhost, url), vhost, url, headers, signal));

  /** What the statistics reporter reads once a second (the gauges of document 1). */
  statsProbe(): WorkerProbe {
    return {
      origin: (host) => this.hosts.get(host)?.origin.sessions(),
      memory: (host) => this.cache?.store.memory.hostUsage(host),
      filesOpen: (host) => this.cache?.store.disk.filesOpen(host) ?? 0,
      busyConnections: () => this.listeners.busy(),
      waitingWrites: () => this.cache?.store.disk.waitingWrites ?? 0,
      disks: () => this.cache?.store.disk.statuses() ?? [],
    };
  }

  /** What the management commands read of this worker. */
  controlSource(): ControlSource {
    return {
      hosts: () => this.hosts,
      cache: () => this.cache,
      prectrl: () => this.prectrl,
      inflightReaders: (vhost, url) => (this.cache?.stage.fetching(vhost, url) ? 1 : 0),
      useOriginEncoding: (vhost) => this.hosts.get(vhost)?.setting.functions.network.cache.compression.useOriginEncoding ?? true,
      smallFileMax: () => this.cache?.store.memoryObjectMax ?? 0,
    };
  }

  /**
   * Formats the access and origin lines of this worker's hosts and hands them, batched, to
   * `direct` (appended to their file: lib/log/direct.ts) or else to `ship` (frames for the
   * primary's writer: lib/log/pipe.ts).
   */
  attachLogs(ship: ConstructorParameters<typeof LogShipper>[0], direct?: ConstructorParameters<typeof LogShipper>[1]): void {
    const shipper = new LogShipper(ship, direct);
    const writer = new HostLogWriter(shipper);
    writer.setHosts(this.hosts.values());
    const remove = [addRecordSink(writer.record), addOriginSink(writer.origin), logRefusals(writer, () => this.state?.table)];
    this.logs = { writer, shipper, remove };
  }

  /** Per TLS host: null when served, else why not (`/get/https`). */
  tlsStatus(): TlsHostStatus {
    return this.listeners.tlsStatus();
  }

  setTicketKeys(keys: Buffer): void {
    this.listeners.setTicketKeys(keys);
  }

  setRing(members: number[]): void {
    this.ring.set(members);
  }

  async drain(timeoutMs: number): Promise<void> {
    await this.listeners.drain(timeoutMs);
    await this.siblings?.close();
    await this.pagedesk.close();
    await Promise.all([...this.hosts.values()].flatMap(clientsOf).concat([...this.retiring]).map((o) => o.close().catch(() => undefined)));
    await this.cache?.close();
    // The last lines: origin exchanges that ended while draining included.
    this.logs?.writer.writeFinished();
    this.logs?.shipper.flush();
    for (const r of this.logs?.remove ?? []) r();
  }
}
