// The three fixed forms of the access log (document 3 `form`): `svc` (W3C with the extension
// fields, in the document's order), `weblogA` (the Apache/nginx "combined" format, read by
// `goaccess --log-format=COMBINED` and every combined-log tool) and `weblogB` (the IIS W3C
// extended format). The `custom` form is custom-format.ts.
import type { RecordFields } from '../../record/transaction.js';
import { clientField, dash, escapeLog, fallbackHosts, plus, reqHeader, requestLine, resHeader, resInfo, stemAndQuery, username, type LineClock, type XffMode } from './fields.js';

/** What a form needs besides the record: the xff mode, the line clock and the completion time. */
export interface LineContext {
  xff: XffMode;
  clock: LineClock;
  /** Wall-clock ms the transaction ended (the line's date and time). */
  now: number;
}

export type LineFormat = (tx: RecordFields, c: LineContext) => string;

export const SVC_FIELDS = [
  'date', 'time', 's-ip', 'cs-method', 'cs-uri-stem', 'cs-uri-query', 's-port', 'cs-username', 'c-ip', 'cs(User-Agent)',
  'sc-status', 'sc-bytes', 'time-taken', 'cs-referer', 'sc-resinfo', 'cs-range', 'sc-cachehit', 'cs-acceptencoding',
  'session-id', 'sc-content-length', 'time-response', 'x-transaction-status', 'x-fallback', 'x-ctx-id', 'x-hook',
  'x-vhost', 'cs-host',
] as const;

const WEBLOGB_FIELDS = [
  'date', 'time', 's-ip', 'cs-method', 'cs-uri-stem', 'cs-uri-query', 's-port', 'cs-username', 'c-ip',
  'cs(User-Agent)', 'cs(Referer)', 'sc-status', 'sc-substatus', 'sc-win32-status', 'sc-bytes', 'cs-bytes', 'time-taken',
] as const;

const w3cHeader = (fields: readonly string[]): string => `#Software: svc-edge\n#Version: 1.0\n#Fields: ${fields.join(' ')}\n`;

/** The lines that start every file of a form (W3C forms only). */
export function headerOf(form: string): string | undefined {
  if (form === 'svc') return w3cHeader(SVC_FIELDS);
  if (form === 'weblogB') return w3cHeader(WEBLOGB_FIELDS);
  return undefined;
}

const ms = (v: number): string => (v < 0 ? '-' : String(Math.round(v)));

export const svcLine: LineFormat = (tx, c) => {
  const [stem, query] = stemAndQuery(tx);
  return `${c.clock.w3cAt(c.now)} ${escapeLog(tx.serverAddress)} ${escapeLog(tx.method)} ${plus(stem)} ${plus(query)} ${tx.serverPort} ` +
    `${plus(username(tx))} ${plus(clientField(tx, c.xff))} ${plus(reqHeader(tx, 'user-agent'))} ${tx.status} ` +
    `${tx.responseHeadBytes + tx.responseBodyBytes} ${ms(tx.totalMs)} ${plus(reqHeader(tx, 'referer'))} ${resInfo(tx)} ` +
    `${plus(reqHeader(tx, 'range'))} ${tx.cacheResult} ${plus(reqHeader(tx, 'accept-encoding'))} ${tx.sessionId} ` +
    `${plus(resHeader(tx, 'content-length'))} ${ms(tx.firstByteMs)} ${tx.completed ? 'c' : 'x'} ${escapeLog(fallbackHosts(tx))} ${tx.ctxId} ${dash(tx.hookLinked)} ` +
    `${dash(tx.host?.logName)} ${plus(reqHeader(tx, 'host'))}\n`;
};

/**
 * The client slots of the combined format, `%h %l`: one address in `%h` so every combined-log
 * tool reads it. `clientIp`: the client; `trimClientIp`: the original client (the first
 * X-Forwarded-For address) when there is one; `all`: the client, with the X-Forwarded-For list
 * in the ident slot `%l` (no spaces, `-` when none).
 */
function combinedClient(tx: RecordFields, mode: XffMode): string {
  const ip = tx.clientAddress;
  if (mode === 'clientIp') return `${ip} -`;
  const xff = reqHeader(tx, 'x-forwarded-for')?.replace(/\s+/g, '');
  if (xff === undefined || xff === '') return `${ip} -`;
  if (mode === 'all') return `${ip} ${escapeLog(xff)}`;
  const c = xff.indexOf(',');
  return `${escapeLog(c < 0 ? xff : xff.slice(0, c))} -`;
}

/** `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i"` */
export const weblogALine: LineFormat = (tx, c) =>
  `${combinedClient(tx, c.xff)} ${dash(username(tx))} [${c.clock.apacheAt(c.now)}] "${dash(requestLine(tx))}" ` +
  `${tx.status} ${tx.responseBodyBytes} "${dash(reqHeader(tx, 'referer'))}" "${dash(reqHeader(tx, 'user-agent'))}"\n`;

/** IIS W3C extended, its default fields plus the byte counts; sc-win32-status 64 (network name gone) for an aborted answer. */
export const weblogBLine: LineFormat = (tx, c) => {
  const [stem, query] = stemAndQuery(tx);
  return `${c.clock.w3cAt(c.now)} ${escapeLog(tx.serverAddress)} ${escapeLog(tx.method)} ${plus(stem)} ${plus(query)} ${tx.serverPort} ` +
    `${plus(username(tx))} ${plus(clientField(tx, c.xff))} ${plus(reqHeader(tx, 'user-agent'))} ${plus(reqHeader(tx, 'referer'))} ` +
    `${tx.status} 0 ${tx.completed ? 0 : 64} ${tx.responseHeadBytes + tx.responseBodyBytes} ` +
    `${tx.requestHeadBytes + tx.requestBodyBytes} ${ms(tx.totalMs)}\n`;
};
