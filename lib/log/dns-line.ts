// The dns log (document 3 `dns`): one line per resolution of a domain origin, W3C style:
//   date time domain ttl ip-list ip-count time-taken result
// `ip-list` comma separated (`-` when none), `time-taken` in ms, `result` success or fail. A
// failed resolution has ttl 0.
import type { DnsRecord } from '../origin/dns.js';

export const DNS_HEADER = '#Software: svc-edge\n#Version: 1.0\n#Fields: date time domain ttl ip-list ip-count time-taken result\n';

export function dnsLine(r: DnsRecord): string {
  const iso = new Date(r.at).toISOString();
  const ips = r.ips.length === 0 ? '-' : r.ips.join(',');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} ${r.domain} ${r.ttl} ${ips} ${r.ips.length} ${Math.round(r.timeTakenMs)} ${r.success ? 'success' : 'fail'}\n`;
}
