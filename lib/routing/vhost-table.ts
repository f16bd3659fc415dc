// Stage "receive", part 1: which virtual host serves a request. Exact names and aliases are a
// Map lookup; wildcard aliases (`*.example.com`) are tried longest suffix first, so the most
// specific one wins. Hosts are scoped to the address and port they listen on (`*` = any address
// of that port); the internal (sibling) port reaches every host.

export interface Listen { host: string | null; port: number }

export interface RoutableHost {
  name: string;
  enable: boolean;
  aliases: string[];
  listen: Listen | null;
}

interface Wildcard<H> { suffix: string; host: H }

export class NameIndex<H> {
  private readonly exact = new Map<string, H>();
  private readonly wildcards: Wildcard<H>[] = [];

  add(name: string, host: H): void {
    const lower = name.toLowerCase();
    if (lower.startsWith('*.')) {
      this.wildcards.push({ suffix: lower.slice(1), host });
      this.wildcards.sort((a, b) => b.suffix.length - a.suffix.length);
    } else if (lower === '*') {
      this.wildcards.push({ suffix: '', host });
      this.wildcards.sort((a, b) => b.suffix.length - a.suffix.length);
    } else if (!this.exact.has(lower)) {
      this.exact.set(lower, host);
    }
  }

  find(name: string): H | undefined {
    const hit = this.exact.get(name);
    if (hit !== undefined) return hit;
    for (const w of this.wildcards) {
      if (name.length > w.suffix.length && name.endsWith(w.suffix)) return w.host;
    }
    return undefined;
  }
}

/** Key of one listening socket: `*:80`, `127.0.0.1:8080`. */
export function listenKey(l: Listen): string {
  return `${l.host ?? '*'}:${l.port}`;
}

/**
 * The hosts of one port: those listening on `*` and those bound to one local address. Nested
 * maps rather than an `ip:port` key, so a lookup builds no string.
 */
interface PortIndex<H> {
  any: NameIndex<H> | undefined;
  byAddress: Map<string, NameIndex<H>>;
  /** The first host of the setting on the port: on `*`, and per address. */
  firstAny: H | undefined;
  firstByAddress: Map<string, H>;
}

/**
 * A local address as the listen setting spells it: a dual-stack `*` socket reports IPv4
 * connections as `::ffff:a.b.c.d`.
 */
export function plainAddress(a: string): string {
  return a.length > 7 && a.charCodeAt(0) === 58 /* : */ && a.startsWith('::ffff:') && a.includes('.', 7) ? a.slice(7) : a;
}

export class VhostTable<H extends RoutableHost> {
  private readonly byPort = new Map<number, PortIndex<H>>();
  private readonly everywhere = new NameIndex<H>();
  private readonly byName = new Map<string, H>();
  private readonly fallback: H | undefined;
  /** Where the fallback host listens: its plain listen and its TLS listens. */
  private readonly fallbackListens: Listen[] = [];

  /**
   * `tlsListensOf`: the TLS listens of a host (https `listen`), routed like its plain one; a
   * port is either plain or TLS (validation keeps them apart), so one index per port serves both.
   */
  constructor(hosts: readonly H[], defaultHosting?: string | null, tlsListensOf?: (h: H) => Listen[]) {
    for (const h of hosts) {
      if (!h.enable) continue;
      this.byName.set(h.name.toLowerCase(), h);
      const names = [h.name, ...h.aliases];
      for (const n of names) this.everywhere.add(n, h);
      const all = tlsListensOf === undefined ? [] : tlsListensOf(h);
      if (h.listen !== null) all.unshift(h.listen);
      for (const l of all) this.index(l, names, h);
    }
    this.fallback = defaultHosting ? this.byName.get(defaultHosting.toLowerCase()) : undefined;
    const f = this.fallback;
    if (f !== undefined) {
      if (f.listen !== null) this.fallbackListens.push(f.listen);
      if (tlsListensOf !== undefined) this.fallbackListens.push(...tlsListensOf(f));
    }
  }

  private index(listen: Listen, names: string[], h: H): void {
    let p = this.byPort.get(listen.port);
    if (p === undefined) this.byPort.set(listen.port, (p = { any: undefined, byAddress: new Map(), firstAny: undefined, firstByAddress: new Map() }));
    let index: NameIndex<H> | undefined;
    if (listen.host === null) {
      index = (p.any ??= new NameIndex<H>());
      p.firstAny ??= h;
    } else {
      const addr = plainAddress(listen.host.toLowerCase());
      if (!p.firstByAddress.has(addr)) p.firstByAddress.set(addr, h);
      index = p.byAddress.get(addr);
      if (index === undefined) p.byAddress.set(addr, (index = new NameIndex<H>()));
    }
    for (const n of names) index.add(n, h);
  }

  /**
   * The host for a name arriving on a public port (at local address `localAddress`), or on the
   * internal port (port undefined). Hosts bound to the connection's own address are tried before
   * the `*` hosts of the port. The default host stands in only where it listens itself, so no
   * host is ever exposed on an address or port it was not given.
   */
  route(name: string, port: number | undefined, localAddress?: string): H | undefined {
    if (port === undefined) return this.everywhere.find(name) ?? this.fallback;
    const p = this.byPort.get(port);
    let addr: string | undefined;
    if (p !== undefined) {
      if (p.byAddress.size > 0 && localAddress !== undefined) {
        addr = plainAddress(localAddress);
        const hit = p.byAddress.get(addr)?.find(name);
        if (hit !== undefined) return hit;
      }
      const hit = p.any?.find(name);
      if (hit !== undefined) return hit;
    }
    const f = this.fallback;
    if (f === undefined) return undefined;
    for (const l of this.fallbackListens) {
      if (l.port !== port) continue;
      if (l.host === null) return f;
      addr ??= localAddress === undefined ? undefined : plainAddress(localAddress);
      if (addr === plainAddress(l.host.toLowerCase())) return f;
    }
    return undefined;
  }

  /**
   * The host a request that names none (or one not served there) belongs to for the logs, as
   * nginx's default server of a listening socket: the host `name` routes to, else the default
   * host where it listens, else the first host of the setting on that address and port.
   */
  hostOfListen(name: string | undefined, port: number, localAddress: string | undefined): H | undefined {
    const routed = this.route(name ?? '', port, localAddress);
    if (routed !== undefined) return routed;
    const p = this.byPort.get(port);
    if (p === undefined) return undefined;
    const onAddress = localAddress === undefined ? undefined : p.firstByAddress.get(plainAddress(localAddress));
    return onAddress ?? p.firstAny;
  }

  host(name: string): H | undefined {
    return this.byName.get(name.toLowerCase());
  }

  /** Distinct plain sockets to open: one per port, on all addresses when any host uses `*`. */
  listens(): Listen[] {
    const ports = new Map<number, Set<string | null>>();
    for (const h of this.byName.values()) {
      if (h.listen === null) continue;
      let set = ports.get(h.listen.port);
      if (set === undefined) ports.set(h.listen.port, (set = new Set()));
      set.add(h.listen.host);
    }
    const out: Listen[] = [];
    for (const [port, hostsOnPort] of ports) {
      if (hostsOnPort.has(null)) out.push({ host: null, port });
      else for (const host of hostsOnPort) out.push({ host, port });
    }
    return out;
  }
}
