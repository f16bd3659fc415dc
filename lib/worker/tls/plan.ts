// Which TLS sockets a setting opens and what each serves: every enabled host with https[] on its
// https `listen` (`*:443` by default, `IP:Port`, or a NIC name standing for each of its
// addresses). Hosts are grouped by port the way plain listens are: one socket per port, on every
// address when any of its hosts uses `*` (or a NIC), and SNI prefers hosts bound to the
// connection's own address.
import os from 'node:os';
import { parseTlsListen } from '../../setting/schema/formats.js';
import type { Listen, ResolvedHost, Setting } from '../../setting/types.js';
import { loadCert, CertProblem, homeFiles } from '../../tls/certificates.js';
import { tlsServerOptions } from '../../tls/options.js';
import type { TlsHost, TlsPort } from './sni.js';
import { stapleTarget } from './stapling.js';

/**
 * The addresses of a network interface; [] when the machine has no such NIC. IPv6 link-local
 * addresses are left out: they cannot be bound without a scope.
 */
function nicAddresses(nic: string): string[] {
  return (os.networkInterfaces()[nic] ?? []).filter((a) => !(a.family === 'IPv6' && a.address.startsWith('fe80'))).map((a) => a.address);
}

/** The listens of a host's https `listen`; throws when a NIC name is unknown here. */
function tlsListensOf(h: Pick<ResolvedHost, 'name' | 'httpsOptions'>): Listen[] {
  const l = parseTlsListen(h.httpsOptions.listen);
  if (l === undefined) throw new Error(`hosting ${h.name}: invalid https listen "${h.httpsOptions.listen}"`);
  if (l.nic === null) return [{ host: l.host, port: l.port }];
  const addrs = nicAddresses(l.nic);
  if (addrs.length === 0) throw new Error(`hosting ${h.name}: https listen names NIC "${l.nic}", which this machine does not have`);
  return addrs.map((host) => ({ host, port: l.port }));
}

export interface TlsPlan {
  ports: TlsPort[];
  /** The certificates whose OCSP responses are stapled. */
  staples: Array<NonNullable<ReturnType<typeof stapleTarget>>>;
  /** Host name -> its TLS listens (for request routing). */
  listens: Map<string, Listen[]>;
}

/**
 * The TLS sockets of the enabled hosts. The default host of a port (its certificate answers a
 * client without SNI or with a name no host has) is `meta.defaultHosting` when that host is on
 * the port, otherwise the port's first host in hosting[] order. Throws on a certificate that
 * cannot be loaded (validation refuses those first; a file changed since is caught here).
 */
export function tlsPlan(setting: Setting, hosts: ResolvedHost[]): TlsPlan {
  const byPort = new Map<number, { hosts: TlsHost[]; any: boolean; addrs: Set<string>; options: TlsPort['options'] }>();
  const listens = new Map<string, Listen[]>();
  const staples: TlsPlan['staples'] = [];
  for (const h of hosts) {
    if (!h.enable || h.https.length === 0) continue;
    const material = h.https.map((e, j) => {
      try {
        return loadCert(e, homeFiles(setting));
      } catch (err) {
        if (err instanceof CertProblem) throw new Error(`hosting ${h.name} https[${j}].${err.member}: ${err.message}`);
        throw err;
      }
    });
    const staple = h.httpsOptions.ocspStapling ? stapleTarget(material) : undefined;
    if (staple !== undefined) staples.push(staple);
    const ls = tlsListensOf(h);
    listens.set(h.name, ls);
    for (const l of ls) {
      let p = byPort.get(l.port);
      if (p === undefined) byPort.set(l.port, (p = { hosts: [], any: false, addrs: new Set(), options: tlsServerOptions(h.httpsOptions) }));
      if (l.host === null) p.any = true;
      else p.addrs.add(l.host);
      p.hosts.push({ name: h.name, names: [h.name, ...h.aliases], listen: l, material, stapleKey: staple?.key });
    }
  }
  const wanted = setting.meta.defaultHosting;
  const ports: TlsPort[] = [];
  for (const [port, p] of byPort) {
    const i = p.hosts.findIndex((h) => h.name === wanted);
    if (i > 0) p.hosts.unshift(...p.hosts.splice(i, 1));
    const sockets: Listen[] = p.any ? [{ host: null, port }] : [...p.addrs].map((host) => ({ host, port }));
    for (const listen of sockets) ports.push({ listen, options: p.options, hosts: p.hosts });
  }
  return { ports, listens, staples };
}
