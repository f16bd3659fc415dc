// The addresses that are this node: every interface address, plus the addresses its own sockets
// are bound to (management API, discovery). Propagation never forwards to them and discovery
// never lists an advertisement that came from them.
import os from 'node:os';

/** IPv4-mapped IPv6 (`::ffff:a.b.c.d`) written as IPv4, as the setting writes addresses. */
export function plainIp(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

export function ownAddresses(bound: readonly (string | undefined)[] = []): Set<string> {
  const own = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) own.add(plainIp(a.address));
  for (const b of bound) if (b !== undefined && b !== '0.0.0.0' && b !== '::') own.add(plainIp(b));
  return own;
}
