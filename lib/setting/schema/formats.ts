// String forms of setting.json that JSON Schema cannot spell clearly (listen addresses, origin
// addresses, sizes, cron schedules). They are typebox formats so that a bad value is reported by
// the same validation pass, at its JSON path, with a message naming the expected form.
// Formats are captured when a validator is compiled, so this module registers them on import.
import { isIP } from 'node:net';
import { Format } from 'typebox/format';
import { isSize } from '../size.js';

export interface ListenAddress { host: string | null; port: number }

function port(s: string): number | undefined {
  if (!/^\d{1,5}$/.test(s)) return undefined;
  const n = Number(s);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** Splits `host:port` where host may be a bracketed IPv6 address. */
function splitHostPort(s: string): { host: string; port: string } | undefined {
  const v6 = /^\[([^\]]+)\]:(\d+)$/.exec(s);
  if (v6 !== null) return { host: v6[1]!, port: v6[2]! };
  const i = s.lastIndexOf(':');
  if (i <= 0) return undefined;
  const host = s.slice(0, i);
  if (host.includes(':')) return undefined;
  return { host, port: s.slice(i + 1) };
}

/** A cluster member `{IP}[:{Port}]` (port null when absent); undefined for any other form. */
export function parseMember(s: string): { ip: string; port: number | null } | undefined {
  if (isIP(s) !== 0) return { ip: s, port: null };
  const hp = splitHostPort(s);
  const p = hp === undefined ? undefined : port(hp.port);
  return hp !== undefined && p !== undefined && isIP(hp.host) !== 0 ? { ip: hp.host, port: p } : undefined;
}

/** `{IP}:{Port}` with IP `*` for every address; `off` gives null. Undefined when malformed. */
export function parseListen(s: string): ListenAddress | null | undefined {
  if (s === 'off') return null;
  const hp = splitHostPort(s);
  if (hp === undefined) return undefined;
  const p = port(hp.port);
  if (p === undefined) return undefined;
  if (hp.host === '*') return { host: null, port: p };
  return isIP(hp.host) !== 0 ? { host: hp.host, port: p } : undefined;
}

const NIC = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/** TLS listen of a virtual host: `{IP|*|NIC}:{Port}` or a NIC name alone (port 443). */
export function parseTlsListen(s: string): { host: string | null; nic: string | null; port: number } | undefined {
  if (NIC.test(s)) return { host: null, nic: s, port: 443 };
  const hp = splitHostPort(s);
  const p = hp === undefined ? undefined : port(hp.port);
  if (hp === undefined || p === undefined) return undefined;
  if (hp.host === '*') return { host: null, nic: null, port: p };
  if (isIP(hp.host) !== 0) return { host: hp.host, nic: null, port: p };
  return NIC.test(hp.host) ? { host: null, nic: hp.host, port: p } : undefined;
}

const DOMAIN = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;
// Cloud dynamic resources of document 2: `#cloudA:vm:tag=web#:8080`, `#cloudA:me:region`.
const CLOUD_DYNAMIC = /^#cloud[AB]:(?:(?:vm|sqs|vip):tag=[^#\s]*(?:#:\d{1,5})?|me:(?:instanceId|region|availabilityZone|accountId))$/;

function isHostName(s: string): boolean {
  return DOMAIN.test(s) || isIP(s) !== 0;
}

/** Origin address `{IP|Domain}[:{Port}][/{Path}]`, or a cloud dynamic resource. */
function isOriginAddress(s: string): boolean {
  if (CLOUD_DYNAMIC.test(s)) return true;
  const m = /^(\[[^\]]+\]|[^/:[\]]+)(?::([^/]*))?(\/\S*)?$/.exec(s);
  if (m === null) return false;
  const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
  if (m[1]!.startsWith('[') ? isIP(host) !== 6 : !isHostName(host)) return false;
  return m[2] === undefined || port(m[2]) !== undefined;
}

/** Cluster member: `{IP}[:{Port}]` or a cloud dynamic resource. */
function isMember(s: string): boolean {
  if (CLOUD_DYNAMIC.test(s)) return true;
  if (isIP(s) !== 0) return true;
  const hp = splitHostPort(s);
  return hp !== undefined && isIP(hp.host) !== 0 && port(hp.port) !== undefined;
}

function isIpv4(s: string): boolean {
  return isIP(s) === 4;
}

/** allowList address: single IP, `a.b.c.1-255`, `a.b.c.0/24`, `a.b.c.0/255.255.255.0`. */
function isAllowAddress(s: string): boolean {
  if (isIP(s) !== 0) return true;
  const range = /^(\d{1,3}\.\d{1,3}\.\d{1,3}\.)(\d{1,3})-(\d{1,3})$/.exec(s);
  if (range !== null) {
    const lo = Number(range[2]);
    const hi = Number(range[3]);
    return isIpv4(range[1]! + range[2]!) && hi <= 255 && lo <= hi;
  }
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const net = s.slice(0, slash);
  const mask = s.slice(slash + 1);
  if (isIP(net) === 6) return /^\d{1,3}$/.test(mask) && Number(mask) <= 128;
  if (!isIpv4(net)) return false;
  if (/^\d{1,2}$/.test(mask)) return Number(mask) <= 32;
  if (!isIpv4(mask)) return false;
  const bits = mask.split('.').map((o) => Number(o).toString(2).padStart(8, '0')).join('');
  return /^1*0*$/.test(bits);
}

const CRON_FIELD = /^[0-9A-Za-z*/,?#LW-]+$/;

/** Cron schedule: five fields, or six with seconds first (read by lib/log/cron.ts). */
function isCron(s: string): boolean {
  const fields = s.trim().split(/\s+/);
  return (fields.length === 5 || fields.length === 6) && fields.every((f) => CRON_FIELD.test(f));
}

/** Upload time of a log repository: two cron fields, minute then hour. */
function isCron2(s: string): boolean {
  const fields = s.trim().split(/\s+/);
  return fields.length === 2 && fields.every((f) => CRON_FIELD.test(f));
}

function isRegex(s: string): boolean {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
}

/** Message for each format, naming the form the value must have. */
export const FORMAT_MESSAGES: Record<string, string> = {
  'svc-listen': 'must be {IP}:{Port} (IP may be *, port 1-65535) or off',
  'svc-address': 'must be {IP}:{Port} (IP may be *, port 1-65535)',
  'svc-tls-listen': 'must be {IP|NIC}:{Port} (IP may be *, port 1-65535) or a NIC name',
  'svc-origin': 'must be {IP|Domain}[:{Port}][/{Path}] (port 1-65535) or a cloud dynamic resource',
  'svc-member': 'must be {IP}[:{Port}] or a cloud dynamic resource',
  'svc-ip': 'must be an IP address',
  'svc-allow': 'must be an IP, a range a.b.c.1-255, a bitmask a.b.c.0/24 or a subnet a.b.c.0/255.255.255.0',
  'svc-size': 'must be a size such as 0, 512kb, 100mb or 1gb',
  'svc-cron': 'must be a cron schedule of 5 or 6 fields',
  'svc-cron2': 'must be two cron fields: minute hour',
  'svc-regex': 'must be a valid regular expression',
  'svc-rescode': 'must be a status code, a class such as 5xx, or fail',
  'svc-hostname': 'must be a host name',
  'svc-field-name': 'must be an HTTP field name (RFC 9110 token: letters, digits and !#$%&\'*+-.^_`|~)',
  'svc-field-value': 'must be printable ASCII without leading or trailing spaces (an HTTP field value)',
};

const CHECKS: Record<string, (s: string) => boolean> = {
  'svc-listen': (s) => parseListen(s) !== undefined,
  'svc-address': (s) => s !== 'off' && parseListen(s) !== undefined,
  'svc-tls-listen': (s) => parseTlsListen(s) !== undefined,
  'svc-origin': isOriginAddress,
  'svc-member': isMember,
  'svc-ip': (s) => isIP(s) !== 0,
  'svc-allow': isAllowAddress,
  'svc-size': isSize,
  'svc-cron': isCron,
  'svc-cron2': isCron2,
  'svc-regex': isRegex,
  'svc-rescode': (s) => /^(?:[1-5]xx|[1-5]\d\d|fail)$/i.test(s),
  // Host names may carry a leading wildcard label (`*.example.com`) as aliases do.
  'svc-hostname': (s) => isHostName(s.startsWith('*.') ? s.slice(2) : s) || s === '*',
  'svc-field-name': (s) => /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(s),
  'svc-field-value': (s) => /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(s),
};

for (const [name, check] of Object.entries(CHECKS)) Format.Set(name, check);
