// The object path of an upload (document 3 "Path variables"): `{group}`, `{domain}`,
// `{hostname}`, `{ip}`, `{logtype}`, `{timestamp}` (yyyymmddhhmmss) and its parts
// `{timestamp.date}` (yyyymmdd), `.time` (hhmmss), `.year`, `.month`, `.day`, `.hour`,
// `.minute`, `.second`, all UTC. An unknown `{name}` is refused at validation, so a typo never
// becomes a literal directory of the bucket.
import os from 'node:os';

export interface PathContext {
  group: string;
  domain: string;
  hostname: string;
  ip: string;
  logtype: string;
  /** The unit's time (ms since the epoch). */
  at: number;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

function timeVars(ms: number): Record<string, string> {
  const d = new Date(ms);
  const year = String(d.getUTCFullYear());
  const month = pad(d.getUTCMonth() + 1);
  const day = pad(d.getUTCDate());
  const hour = pad(d.getUTCHours());
  const minute = pad(d.getUTCMinutes());
  const second = pad(d.getUTCSeconds());
  return {
    timestamp: `${year}${month}${day}${hour}${minute}${second}`,
    'timestamp.date': `${year}${month}${day}`,
    'timestamp.time': `${hour}${minute}${second}`,
    'timestamp.year': year, 'timestamp.month': month, 'timestamp.day': day,
    'timestamp.hour': hour, 'timestamp.minute': minute, 'timestamp.second': second,
  };
}

const VARIABLE = /\{([a-z.]+)\}/g;
const NAMES = new Set(['group', 'domain', 'hostname', 'ip', 'logtype', ...Object.keys(timeVars(0))]);

/** Variables of a template that document 3 does not define. */
export function unknownVariables(template: string): string[] {
  return [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]!).filter((n) => !NAMES.has(n));
}

export function expandPath(template: string, c: PathContext): string {
  const vars: Record<string, string> = { group: c.group, domain: c.domain, hostname: c.hostname, ip: c.ip, logtype: c.logtype, ...timeVars(c.at) };
  return template.replace(VARIABLE, (whole, name: string) => vars[name] ?? whole).replace(/^\/+/, '');
}

/** The node's first external IPv4 address (`{ip}`), else its first external IPv6, else 127.0.0.1. */
export function nodeIp(): string {
  const all = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []).filter((a) => !a.internal);
  return (all.find((a) => a.family === 'IPv4') ?? all[0])?.address ?? '127.0.0.1';
}
