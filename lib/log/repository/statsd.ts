// The statsd repository: a unit becomes counters sent as plain statsd lines over UDP to
// 127.0.0.1:<port>, several lines per datagram (newline separated, as the statsd daemon reads
// them). Per unit and exported event id: `svc.<logtype>.<domain>.<id>:<count>|c`, where the id
// is the watch-log event code, and `lines` for the lines of the other logs. Names use only
// [A-Za-z0-9_-] between the dots (a domain's dots become `_`).
import dgram from 'node:dgram';
import { eventIdOf, type LineFilter } from './exports.js';
import { dataLines } from './unit.js';

const DATAGRAM_BYTES = 1400;

const segment = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');

/** Counters of a unit's lines, by metric name. */
export async function countUnit(dir: string, files: readonly string[], logtype: string, domain: string, keep: LineFilter | undefined): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const prefix = `svc.${segment(logtype)}.${segment(domain)}.`;
  for await (const line of dataLines(dir, files)) {
    if (keep !== undefined && !keep(line)) continue;
    const name = prefix + (logtype === 'watch' ? segment(eventIdOf(logtype, line)) : 'lines');
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/** Sends the counters; resolves to the bytes sent. */
export async function sendStatsd(port: number, counts: Map<string, number>): Promise<number> {
  const datagrams: string[] = [];
  let cur = '';
  for (const [name, n] of counts) {
    const line = `${name}:${n}|c`;
    if (cur !== '' && cur.length + 1 + line.length > DATAGRAM_BYTES) { datagrams.push(cur); cur = ''; }
    cur = cur === '' ? line : `${cur}\n${line}`;
  }
  if (cur !== '') datagrams.push(cur);
  if (datagrams.length === 0) return 0;
  const sock = dgram.createSocket('udp4');
  try {
    let bytes = 0;
    for (const d of datagrams) {
      await new Promise<void>((resolve, reject) => sock.send(d, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
      bytes += Buffer.byteLength(d);
    }
    return bytes;
  } finally {
    sock.close();
  }
}
