// The origin log (document 3 `origin`): one line per origin exchange, formatted in the worker
// when the exchange ends (the OriginTrace is complete then), W3C style with a `#Fields:` header.
// A failed exchange's line starts with `#[ERROR:<nn>]` (ORIGIN_ERRORS, README).
import { parseOriginAddress, responseField, type OriginTrace, type ProbeRecord } from '../../origin/index.js';
import type { SockError } from '../../origin/errors.js';
import { plus } from '../access/fields.js';
import type { LineClock } from '../access/fields.js';

export const ORIGIN_FIELDS = [
  'date', 'time', 'cs-sid', 'cs-tcount', 'c-ip', 'cs-method', 's-domain', 'cs-uri', 's-ip', 'sc-status', 'cs-range',
  'sc-sock-error', 'sc-http-error', 'sc-content-length', 'cs-requestsize', 'sc-responsesize', 'sc-bytes', 'time-taken',
  'time-dns', 'time-connect', 'time-firstbyte', 'time-complete', 'cs-reqinfo', 'cs-acceptencoding', 'sc-cachecontrol',
  's-port', 'sc-contentencoding', 'session-id', 'session-type', 'x-sc-chain-error', 'x-sc-chain-info', 'time-sock-creation',
  'x-cs-retry', 'x-cs-extra-field', 'time-request', 'x-ctx-id', 'cs-balance',
] as const;

export const ORIGIN_HEADER = `#Software: svc-edge\n#Version: 1.0\n#Fields: ${ORIGIN_FIELDS.join(' ')}\n`;

/**
 * The `#[ERROR:<nn>]` numbers of a failed exchange. `Client-Close` (we closed first: the client
 * left) is not an origin failure and writes an ordinary line.
 */
const ORIGIN_ERRORS: Record<Exclude<SockError, 'Client-Close'>, string> = {
  'Connect-Timeout': '01',
  'Receive-Timeout': '02',
  'Server-Close': '03',
  'Non-Existent-Domain': '04',
};

const ms = (v: number): string => (v < 0 ? '-' : String(Math.round(v)));
const p2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

function clockTime(wall: number): string {
  const d = new Date(wall);
  return `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}.${String(d.getUTCMilliseconds()).padStart(3, '0')}`;
}

/** The line of an ended exchange that carries a note (the origin log is on for its host). */
export function originLine(t: OriginTrace, clock: LineClock, now: number): string {
  const n = t.note!;
  const colon = t.address.lastIndexOf(':');
  const ip = colon < 0 ? '' : t.address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = colon < 0 ? '' : t.address.slice(colon + 1);
  const startedWall = now - (performance.now() - t.startedAt);
  const transfer = t.completeMs >= 0 && t.firstByteMs >= 0 ? t.completeMs - t.firstByteMs : -1;
  const err = t.sockError;
  const line = `${clock.w3cAt(now)} ${t.socketId || '-'} ${t.socketUses || '-'} ${plus(t.localAddress)} ${n.method} ` +
    `${plus(t.domain)} ${plus(n.url)} ${plus(ip)} ${t.status} ${plus(n.range)} ${err ?? '-'} ` +
    `${t.status >= 400 ? t.status : '-'} ${plus(responseField(t, 'content-length'))} ${t.requestHeadBytes} ${t.responseHeadBytes} ` +
    `${t.responseBodyBytes} ${ms(t.completeMs)} ${ms(t.dnsMs)} ${ms(t.connectMs)} ${ms(t.firstByteMs)} ${ms(transfer)} ` +
    `${n.bypass} ${plus(n.acceptEncoding)} ${plus(responseField(t, 'cache-control'))} ${plus(port)} ` +
    `${plus(responseField(t, 'content-encoding'))} ${n.sessionId} ${n.sessionType} ${plus(n.chainError)} ${plus(n.chainInfo)} ${t.reused ? 0 : ms(t.connectMs)} ` +
    `${t.retried ? 'y' : 'n'} - ${clockTime(startedWall)} ${n.ctxId} ${n.balance}\n`;
  return err === undefined || err === 'Client-Close' ? line : `#[ERROR:${ORIGIN_ERRORS[err]}] ${line}`;
}

/**
 * The line of a recovery probe (a TCP connect to an Inactive address, lib/origin/health.ts):
 * `session-type` `recovery`, `cs-balance` `-` (document 3); no request, so no method, URL,
 * status or sizes. A probe that did not connect is an `#[ERROR:<nn>]` line.
 */
export function probeLine(p: ProbeRecord, clock: LineClock): string {
  let domain = '-';
  try {
    const parts = parseOriginAddress(p.address, 'http');
    if (!parts.isIp) domain = parts.host;
  } catch {
    // A configured address always parses; '-' keeps the line whole if one ever did not.
  }
  const c = ms(p.connectMs);
  const line = `${clock.w3cAt(p.at)} - - ${plus(p.localAddress)} - ${domain} - ${p.ip} 0 - ${p.error ?? '-'} - - 0 0 0 ${c} - ` +
    `${p.error === undefined ? c : '-'} - - - - - ${p.port} - - recovery - - ${p.error === undefined ? c : '-'} n - ${clockTime(p.at)} - -\n`;
  return p.error === undefined ? line : `#[ERROR:${ORIGIN_ERRORS[p.error]}] ${line}`;
}
