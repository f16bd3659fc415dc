// Hop-by-hop fields (RFC 9110 7.6.1) describe one connection, never the message: a proxy must
// not forward them, nor any field the Connection header names.
import type { IncomingHttpHeaders } from 'node:http';

/** Our Via entry (RFC 9110 7.6.3), added to what we forward and to what we answer from the cache. */
export const VIA = '1.1 svc';

const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'proxy-authenticate', 'proxy-authorization', 'http2-settings',
]);

export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name);
}

/** Names listed in a Connection header value (lower-case), or null when there are none. */
function connectionListed(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  const text = Array.isArray(value) ? value.join(',') : value;
  let names: Set<string> | null = null;
  for (const part of text.split(',')) {
    const name = part.trim().toLowerCase();
    if (name === '' || name === 'close' || name === 'keep-alive') continue;
    (names ??= new Set()).add(name);
  }
  return names;
}

/**
 * Copies end-to-end request fields for the origin: drops hop-by-hop fields, those named by
 * Connection, and Host (the origin layer sets its own). Node joins most repeated fields already.
 * Expect goes too: node has already answered `100-continue` to the client, the body is coming
 * regardless, and undici refuses to send the field (UND_ERR_NOT_SUPPORTED), which would turn
 * every such request into a 502.
 */
export function endToEndRequestHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const listed = connectionListed(headers.connection);
  // An HTTP/2 request's fields include its pseudo-headers (`:path` ...): the request line, not fields.
  const h2 = headers[':method'] !== undefined;
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    if (name === 'host' || name === 'expect' || HOP_BY_HOP.has(name) || (listed !== null && listed.has(name))) continue;
    if (h2 && name.charCodeAt(0) === 58) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The same filter for response fields arriving from the origin. */
export function endToEndResponseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const listed = connectionListed(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || (listed !== null && listed.has(name))) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
