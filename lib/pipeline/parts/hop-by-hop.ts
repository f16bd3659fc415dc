// What the proxy forwards of a message: not its hop-by-hop fields (RFC 9110 7.6.1; the list is
// lib/http/hop-by-hop.ts, shared with the cache), nor any field the Connection header names.
import type { IncomingHttpHeaders } from 'node:http';
import { connectionListed, isHopByHop } from '../../http/hop-by-hop.js';

/** Our Via entry (RFC 9110 7.6.3), added to what we forward and to what we answer from the cache. */
export const VIA = '1.1 svc';

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
    if (name === 'host' || name === 'expect' || isHopByHop(name) || (listed !== null && listed.has(name))) continue;
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
    if (isHopByHop(name) || (listed !== null && listed.has(name))) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
