// Requests the HTTP parser refuses (400 malformed, 408 too slow, 414 and 431 too long, 501
// unknown method) never become transactions, yet an operator looks for them in the access log,
// as nginx writes them there: an attack or a broken client must leave a trace where the traffic
// is. This turns what is known of such a request (the connection, the status sent, the bytes the
// parser stopped in, the request head when it was complete) into the record the access-log forms
// read, so each form writes it with its own fields: the request line when it was parsed, `-` for
// what never arrived, cache result TCP_ERROR, the answer complete (`c`: the refusal went out whole).
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Connection, RecordFields } from '../../record/transaction.js';

/** What the server knows of one refused request. */
export interface RefusedRequest {
  connection: Connection;
  status: number;
  /** The answer sent (status line, fields, body), whose size is sc-bytes. */
  answer: string;
  /** The bytes the parser stopped in, from the start of the refused request; undefined when none. */
  head: Buffer | undefined;
  /** The request, when its head had been parsed (a body too slow: 408). */
  req: { method?: string | undefined; url?: string | undefined; httpVersion: string; headers: IncomingHttpHeaders } | undefined;
  /** Wall-clock ms of the refusal. */
  at: number;
}

export interface ParsedHead {
  method: string | undefined;
  target: string | undefined;
  version: string | undefined;
  headers: IncomingHttpHeaders;
  /** Bytes of the head received (up to its end, or all of them when it never ended). */
  bytes: number;
}

const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\S+)(?: HTTP\/(\d\.\d))?$/;
/** Fields read from an unparsed head: those the forms write. */
const KEPT = new Set(['host', 'user-agent', 'referer', 'x-forwarded-for', 'range', 'accept-encoding', 'authorization', 'cookie']);

/**
 * The request line and the fields the forms read, from the raw bytes (latin1, as node reads a
 * head). A request line that does not have the form `METHOD SP target [SP HTTP/x.y]` is not
 * parsed: the line shows `-` for it. Bounded by the bytes given (the parser's own size limit).
 */
export function parseHead(raw: Buffer): ParsedHead {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const lines = (end < 0 ? text : text.slice(0, end)).split(/\r?\n/);
  const m = REQUEST_LINE.exec(lines[0] ?? '');
  const headers: IncomingHttpHeaders = {};
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!;
    const colon = l.indexOf(':');
    if (colon <= 0) continue;
    const name = l.slice(0, colon).toLowerCase();
    if (KEPT.has(name) && headers[name] === undefined) headers[name] = l.slice(colon + 1).trim();
  }
  return { method: m?.[1], target: m?.[2], version: m?.[3], headers, bytes: end < 0 ? raw.length : end + 4 };
}

/** The Host of a refused request without its port; undefined when none was sent. */
export function hostName(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.host;
  if (h === undefined || h === '') return undefined;
  return h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.replace(/:\d*$/, '');
}

/** The record the access-log forms read, for a refused request logged under `host`. */
export function refusedRecord(r: RefusedRequest, host: RecordFields['host']): RecordFields {
  const p = r.head === undefined ? undefined : parseHead(r.head);
  const method = r.req?.method ?? p?.method ?? '-';
  const url = r.req?.url ?? p?.target ?? '-';
  const headers = r.req?.headers ?? p?.headers ?? {};
  const bodyStart = r.answer.indexOf('\r\n\r\n') + 4;
  const c = r.connection;
  return {
    req: { headers } as RecordFields['req'],
    res: { getHeader: () => undefined } as unknown as RecordFields['res'],
    host, sessionId: 0, ctxId: randomUUID(), method, urlReceived: url, url, loggedUrl: url,
    httpVersion: r.req?.httpVersion ?? p?.version ?? '1.1', protocol: c.tls === undefined ? 'http' : 'https', connection: c,
    clientAddress: c.clientAddress, clientPort: c.clientPort, serverAddress: c.serverAddress, serverPort: c.serverPort,
    fromSibling: false, handedTo: -1, startedAt: r.at, firstByteMs: 0, totalMs: 0, status: r.status,
    requestHeadBytes: p?.bytes ?? 0, requestBodyBytes: 0, responseHeadBytes: bodyStart, responseBodyBytes: r.answer.length - bodyStart,
    responseFields: { 'content-length': String(r.answer.length - bodyStart) }, cacheResult: 'TCP_ERROR', completed: true,
    origin: undefined, bypass: 0, rewrites: 0, access: 0, fallback: undefined, hookLinked: '', hook: undefined,
  };
}
