// Addresses of callers and allowList entries as numbers, so that a request's check is a few
// integer comparisons. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`, also the fully expanded
// form uWebSockets.js reports on a dual-stack socket) are IPv4: an operator writes `127.0.0.1`
// and the kernel may hand us `::ffff:127.0.0.1`.
import { isIP } from 'node:net';

export type ParsedIp = { v: 4; n: number } | { v: 6; n: bigint };

function ipv4ToInt(s: string): number | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const o = Number(p);
    if (o > 255) return undefined;
    n = n * 256 + o;
  }
  return n;
}

function ipv6ToBigInt(s: string): bigint | undefined {
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (isIP(s) !== 6) return undefined;
  // An embedded dotted quad stands for the last two groups.
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = ipv4ToInt(s.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, rest] = s.split('::') as [string, string | undefined];
  const toGroups = (x: string): number[] => (x === '' ? [] : x.split(':').map((g) => parseInt(g, 16)));
  const front = toGroups(head);
  const back = rest === undefined ? [] : toGroups(rest);
  const fill = 8 - front.length - back.length;
  if (fill < 0 || (rest === undefined && fill !== 0)) return undefined;
  const groups = [...front, ...new Array<number>(fill).fill(0), ...back];
  let n = 0n;
  for (const g of groups) n = (n << 16n) | BigInt(g);
  return n;
}

/** Parses an IPv4 or IPv6 address; a v4-mapped IPv6 address comes back as IPv4. */
export function parseIp(s: string): ParsedIp | undefined {
  const v4 = ipv4ToInt(s);
  if (v4 !== undefined) return { v: 4, n: v4 };
  const v6 = ipv6ToBigInt(s);
  if (v6 === undefined) return undefined;
  if (v6 >> 32n === 0xffffn) return { v: 4, n: Number(v6 & 0xffffffffn) };
  return { v: 6, n: v6 };
}

/** One allowList address compiled: a range of integers of one family. */
export interface AddressRange { v: 4 | 6; lo: number | bigint; hi: number | bigint }

function v4Prefix(net: number, bits: number): AddressRange {
  const size = 2 ** (32 - bits);
  const lo = Math.floor(net / size) * size;
  return { v: 4, lo, hi: lo + size - 1 };
}

/**
 * Compiles an allowList `addr`: single IP, `a.b.c.L-H` (last octet range), `a.b.c.0/24`,
 * `a.b.c.0/255.255.255.0`, or an IPv6 address or prefix. Throws on anything else.
 */
export function compileAddress(addr: string): AddressRange {
  const s = addr.trim();
  const single = parseIp(s);
  if (single !== undefined) return { v: single.v, lo: single.n, hi: single.n } as AddressRange;
  const range = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.(\d{1,3})-(\d{1,3})$/.exec(s);
  if (range !== null) {
    const base = ipv4ToInt(`${range[1]}.0`);
    const lo = Number(range[2]);
    const hi = Number(range[3]);
    if (base === undefined || lo > 255 || hi > 255 || lo > hi) throw new Error(`bad address range "${addr}"`);
    return { v: 4, lo: base + lo, hi: base + hi };
  }
  const slash = s.indexOf('/');
  if (slash > 0) {
    const net = parseIp(s.slice(0, slash));
    const mask = s.slice(slash + 1);
    if (net?.v === 4) {
      if (/^\d{1,2}$/.test(mask) && Number(mask) <= 32) return v4Prefix(net.n, Number(mask));
      const m = ipv4ToInt(mask);
      if (m !== undefined) {
        const bits = m.toString(2).padStart(32, '0');
        if (/^1*0*$/.test(bits)) return v4Prefix(net.n, bits.indexOf('0') < 0 ? 32 : bits.indexOf('0'));
      }
    } else if (net?.v === 6 && /^\d{1,3}$/.test(mask) && Number(mask) <= 128) {
      const host = 128n - BigInt(mask);
      const lo = (net.n >> host) << host;
      return { v: 6, lo, hi: lo + (1n << host) - 1n };
    }
  }
  throw new Error(`bad allowList address "${addr}"`);
}

export function inRange(ip: ParsedIp, r: AddressRange): boolean {
  return ip.v === r.v && ip.n >= r.lo && ip.n <= r.hi;
}

const V4_LOOPBACK: AddressRange = { v: 4, lo: 0x7f000000, hi: 0x7fffffff };

/** Whether every address of the range is a loopback address (127.0.0.0/8 or ::1). */
export function isLoopbackRange(r: AddressRange): boolean {
  if (r.v === 6) return r.lo === 1n && r.hi === 1n;
  return r.lo >= V4_LOOPBACK.lo && r.hi <= V4_LOOPBACK.hi;
}
