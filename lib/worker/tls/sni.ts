// Certificate choice by SNI on one TLS socket. The names are the hosts' names and aliases, with
// the same rules as request routing (exact first, then wildcards `*.example.com` longest suffix
// first): the certificate a client sees belongs to the host its Host header will reach. Hosts
// bound to the connection's local address are tried before the `*` hosts of the port.
import tls from 'node:tls';
import { NameIndex, plainAddress, type Listen } from '../../routing/vhost-table.js';
import { contextOptions, type CertMaterial } from '../../tls/certificates.js';
import type { TlsServerOptions } from '../../tls/options.js';
import type { Stapler } from './stapling.js';

export interface TlsHost {
  name: string;
  /** The name and the aliases. */
  names: string[];
  /** Where this host's TLS listen is bound (host null: every address of the port). */
  listen: Listen;
  material: CertMaterial[];
  /** The certificate whose OCSP response is stapled (stapling.ts), if any. */
  stapleKey: string | undefined;
}

/** One listening TLS socket: its hosts, first the default one, and their shared options. */
export interface TlsPort {
  listen: Listen;
  options: TlsServerOptions;
  /** [0] is the default host: its certificate answers a client without SNI or with an unknown name. */
  hosts: TlsHost[];
}

export class SniContexts {
  private readonly any = new NameIndex<tls.SecureContext>();
  private readonly byAddress = new Map<string, NameIndex<tls.SecureContext>>();
  /** The default host's context: for a client without SNI or with a name no host has. */
  private readonly fallback: tls.SecureContext;
  private readonly contexts: tls.SecureContext[] = [];
  /** Context -> the key of its stapled OCSP response. */
  private readonly staples = new Map<tls.SecureContext, string>();

  /** `ticketKeys`: the node's session ticket keys (lib/primary/ticket-keys.ts). */
  constructor(port: TlsPort, ticketKeys: Buffer) {
    let first: tls.SecureContext | undefined;
    for (const h of port.hosts) {
      const ctx = tls.createSecureContext({ ...contextOptions(h.material, port.options), ticketKeys });
      this.contexts.push(ctx);
      if (h.stapleKey !== undefined) this.staples.set(ctx, h.stapleKey);
      first ??= ctx;
      let index = this.any;
      if (h.listen.host !== null) {
        const addr = plainAddress(h.listen.host.toLowerCase());
        index = this.byAddress.get(addr) ?? new NameIndex<tls.SecureContext>();
        this.byAddress.set(addr, index);
      }
      for (const n of h.names) index.add(n, ctx);
    }
    this.fallback = first!;
  }

  /** The OCSP response to staple on a connection with this context (undefined: none). */
  staple(ctx: tls.SecureContext, stapler: Stapler): Buffer | undefined {
    if (this.staples.size === 0) return undefined;
    const key = this.staples.get(ctx);
    return key === undefined ? undefined : stapler.staple(key);
  }

  /** Rotated keys, for the next handshakes. */
  setTicketKeys(keys: Buffer): void {
    // tls.Server#setTicketKeys does the same on its own context.
    for (const ctx of this.contexts) (ctx.context as { setTicketKeys(k: Buffer): void }).setTicketKeys(keys);
  }

  /** The context of a connection from its SNI name (lower case; undefined: none sent). */
  find(name: string | undefined, localAddress: string | undefined): tls.SecureContext {
    if (name === undefined) return this.fallback;
    if (this.byAddress.size > 0 && localAddress !== undefined) {
      const hit = this.byAddress.get(plainAddress(localAddress))?.find(name);
      if (hit !== undefined) return hit;
    }
    return this.any.find(name) ?? this.fallback;
  }
}
