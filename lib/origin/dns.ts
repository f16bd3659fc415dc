// Resolution of domain origin addresses with their DNS TTL. Resolver answers (not the OS
// resolver) are used because only they carry the TTL; names without a DNS record (localhost,
// /etc/hosts entries) fall back to the OS lookup with a fixed TTL.
import dns from 'node:dns';

export interface DnsRecord {
  domain: string;
  /** Seconds the answer is used (smallest record TTL; FALLBACK_TTL_S for the OS lookup). */
  ttl: number;
  ips: string[];
  timeTakenMs: number;
  success: boolean;
  /** Epoch ms when the resolution finished. */
  at: number;
  /** Resolver error code on failure (ENOTFOUND, ETIMEOUT, ...). */
  error?: string;
  /** Which path answered: the DNS resolver or the OS lookup. */
  via?: 'dns' | 'lookup';
}

const FALLBACK_TTL_S = 60;
/** A zero TTL would mean a resolution per request; a second is the floor. */
const MIN_TTL_S = 1;

// One resolver for the process, with bounded waits: c-ares defaults would stall a first request
// for many seconds when no DNS server answers.
let resolver: dns.promises.Resolver | undefined;
function getResolver(): dns.promises.Resolver {
  resolver ??= new dns.promises.Resolver({ timeout: 2000, tries: 2 });
  return resolver;
}

export interface Resolution { ips: string[]; ttl: number; via: 'dns' | 'lookup' }

async function viaResolver(domain: string): Promise<Resolution | null> {
  const r = getResolver();
  const [a, aaaa] = await Promise.allSettled([r.resolve4(domain, { ttl: true }), r.resolve6(domain, { ttl: true })]);
  const ips: string[] = [];
  let ttl = Infinity;
  // IPv4 first: it is what most origins listen on and what the loopback tests use.
  for (const res of [a, aaaa]) {
    if (res.status !== 'fulfilled') continue;
    for (const rec of res.value) {
      ips.push(rec.address);
      if (rec.ttl < ttl) ttl = rec.ttl;
    }
  }
  if (ips.length === 0) return null;
  return { ips, ttl: Math.max(MIN_TTL_S, ttl), via: 'dns' };
}

async function viaLookup(domain: string): Promise<Resolution> {
  const all = await dns.promises.lookup(domain, { all: true, order: 'ipv4first' });
  const ips = [...new Set(all.map((x) => x.address))];
  if (ips.length === 0) throw Object.assign(new Error(`no address for ${domain}`), { code: 'ENOTFOUND' });
  return { ips, ttl: FALLBACK_TTL_S, via: 'lookup' };
}

/** Resolves a domain; reports the outcome (success or failure) to onDns; throws on failure. */
export async function resolveDomain(domain: string, onDns?: (r: DnsRecord) => void): Promise<Resolution> {
  const start = performance.now();
  try {
    // RFC 6761: localhost names never go to DNS.
    const local = domain === 'localhost' || domain.endsWith('.localhost');
    const res = (local ? null : await viaResolver(domain).catch(() => null)) ?? await viaLookup(domain);
    onDns?.({
      domain, ttl: res.ttl, ips: res.ips, timeTakenMs: performance.now() - start, success: true, at: Date.now(), via: res.via,
    });
    return res;
  } catch (err) {
    onDns?.({
      domain, ttl: 0, ips: [], timeTakenMs: performance.now() - start, success: false, at: Date.now(),
      error: (err as { code?: string }).code ?? String(err),
    });
    throw err;
  }
}
