// Hop-by-hop fields describe one connection, never the message (RFC 9110 7.6.1): a proxy does
// not forward them, nor any field the Connection header names, and a cache neither stores them
// nor copies them from a 304. The proxy (lib/pipeline/parts/hop-by-hop.ts, and the Vary key of
// lib/pipeline/parts/rules.ts), the cache (lib/cache/policy/conditional.ts) and the fleet's purge
// forwarding (lib/primary/fleet/propagation.ts) all read this one list, which lives below all of
// them so it cannot drift apart again.

const HOP_BY_HOP: ReadonlySet<string> = new Set([
  // RFC 9110 7.6.1.
  'connection', 'proxy-connection', 'keep-alive', 'te', 'transfer-encoding', 'upgrade',
  // RFC 2616 13.5.1 listed these as well: they concern the next hop only (the chunked framing's
  // trailer section; the next proxy's authentication).
  'trailer', 'proxy-authenticate', 'proxy-authorization',
  // The settings of an h2c upgrade (RFC 7540 3.2.1): connection-specific.
  'http2-settings',
]);

/** `name` lower-case. */
export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name);
}

/** The field names a Connection value lists (lower-case), or null when there are none. */
export function connectionListed(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined || value === 'keep-alive' || value === 'close') return null; // the usual values, as node and undici send them
  const text = Array.isArray(value) ? value.join(',') : value;
  let names: Set<string> | null = null;
  for (const part of text.split(',')) {
    const name = part.trim().toLowerCase();
    // Connection options, not field names (keep-alive is hop-by-hop anyway).
    if (name === '' || name === 'close' || name === 'keep-alive') continue;
    (names ??= new Set()).add(name);
  }
  return names;
}

/**
 * Whether a Connection value lists the (lower-case) field name: compared in place, without
 * splitting the value, for the hit path (the Vary key of every stored variant asks it).
 */
export function connectionLists(connection: string, name: string): boolean {
  const len = connection.length;
  let i = 0;
  while (i < len) {
    while (i < len && (connection.charCodeAt(i) === 32 || connection.charCodeAt(i) === 9 || connection.charCodeAt(i) === 44)) i++;
    let end = i;
    while (end < len && connection.charCodeAt(end) !== 44) end++;
    let last = end;
    while (last > i && (connection.charCodeAt(last - 1) === 32 || connection.charCodeAt(last - 1) === 9)) last--;
    if (last - i === name.length) {
      let same = true;
      for (let j = 0; j < name.length && same; j++) same = (connection.charCodeAt(i + j) | 0x20) === (name.charCodeAt(j) | 0x20);
      if (same) return true;
    }
    i = end + 1;
  }
  return false;
}
