// Origin address strings of the setting: `{IP|Domain}[:{Port}][/{Path}]`, parsed once per setting
// load so that the request path only concatenates precomputed strings.
import { isIP } from 'node:net';

export interface OriginAddressParts {
  /** The address exactly as configured (the key of `/monitoring/origin`). */
  raw: string;
  /** IP (IPv6 without brackets) or lower-case domain. */
  host: string;
  port: number;
  /** '' or '/prefix' without a trailing slash; the client URL is appended to it. */
  path: string;
  isIp: boolean;
  /** Whether the configured string names the port (it then appears in the Host header). */
  explicitPort: boolean;
}

// RFC 1123 labels; underscore accepted because real origins (service records, cloud names) use it.
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

function bad(s: string, why: string): Error {
  return new Error(`invalid origin address ${JSON.stringify(s)}: ${why}`);
}

export function parseOriginAddress(s: string, protocol: 'http' | 'https'): OriginAddressParts {
  if (typeof s !== 'string' || s.length === 0) throw bad(String(s), 'empty');
  if (/\s/.test(s)) throw bad(s, 'contains white space');
  if (s.includes('://')) throw bad(s, 'must not carry a scheme (the host protocol decides it)');
  if (/[?#]/.test(s)) throw bad(s, 'must not carry a query or fragment');

  const slash = s.indexOf('/');
  const hostPort = slash < 0 ? s : s.slice(0, slash);
  let path = slash < 0 ? '' : s.slice(slash);
  while (path.endsWith('/')) path = path.slice(0, -1);
  if (path.includes('//')) throw bad(s, 'empty path segment');

  let host: string;
  let portText: string | undefined;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) throw bad(s, 'unclosed IPv6 bracket');
    host = hostPort.slice(1, close);
    const rest = hostPort.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) throw bad(s, 'unexpected text after the IPv6 address');
    portText = rest === '' ? undefined : rest.slice(1);
    if (isIP(host) !== 6) throw bad(s, 'not an IPv6 address inside brackets');
  } else if (isIP(hostPort) === 6) {
    host = hostPort; // bare IPv6 cannot carry a port: brackets are required for that
  } else {
    const colon = hostPort.indexOf(':');
    if (colon !== hostPort.lastIndexOf(':')) throw bad(s, 'IPv6 addresses with a port need brackets');
    host = colon < 0 ? hostPort : hostPort.slice(0, colon);
    portText = colon < 0 ? undefined : hostPort.slice(colon + 1);
  }
  if (host === '') throw bad(s, 'missing host');

  let port = protocol === 'https' ? 443 : 80;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText)) throw bad(s, 'port must be a number');
    port = Number(portText);
    if (port < 1 || port > 65535) throw bad(s, 'port out of range 1-65535');
  }

  const isIp = isIP(host) !== 0;
  if (!isIp) {
    host = host.toLowerCase();
    if (host.endsWith('.')) host = host.slice(0, -1);
    if (host.length > 253) throw bad(s, 'domain too long');
    // All-numeric dotted names are mistyped IPs, not domains.
    if (/^[\d.]+$/.test(host)) throw bad(s, 'not a valid IPv4 address');
    for (const label of host.split('.')) {
      if (!LABEL.test(label)) throw bad(s, `bad domain label ${JSON.stringify(label)}`);
    }
  }
  return { raw: s, host, port, path, isIp, explicitPort: portText !== undefined };
}

/**
 * Host header for an address: the virtual host for an IP address, the domain for a domain
 * address, with `:<port>` only when the setting names the port.
 */
export function originHostHeader(parts: OriginAddressParts, vhost: string): string {
  const name = parts.isIp ? vhost : parts.host;
  return parts.explicitPort ? `${name}:${parts.port}` : name;
}

/** URL origin for undici (brackets for IPv6). */
export function poolOrigin(protocol: 'http' | 'https', ip: string, port: number): string {
  return `${protocol}://${isIP(ip) === 6 ? `[${ip}]` : ip}:${port}`;
}
