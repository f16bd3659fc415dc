// The values of one access-log line, read from a finished transaction record where they already
// are (the request's headers, the response's headers, the record): shared by the four forms.
// Nothing here allocates unless a value is asked for.
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import type { RecordFields } from '../../record/transaction.js';

export type XffMode = 'all' | 'clientIp' | 'trimClientIp';

/** A character escapeLog rewrites: control bytes, DEL, non-ASCII, `"` and `\`. */
const UNSAFE = /[\x00-\x1f"\\\x7f-\uffff]/;
const HEX = '0123456789ABCDEF';
const hex = (b: number): string => `\\x${HEX[b >> 4]}${HEX[b & 15]}`;

/**
 * A value as nginx writes it into an access log: every byte below 0x20, 0x7F and every byte from
 * 0x80 on as `\xHH`, `"` and `\` after a backslash, so a line is ASCII, one line, and its quoted
 * fields end where they seem to. node hands header values and the target over as latin1 (one
 * character per byte received): a UTF-8 `é` from the client is the two characters 0xC3 0xA9 and
 * is written `\xC3\xA9`, the bytes the client sent (written as UTF-8 they became `Ã©`). A
 * character beyond 0xFF (a rewritten URL of ours) is escaped as its UTF-8 bytes.
 */
export function escapeLog(v: string): string {
  if (!UNSAFE.test(v)) return v;
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) out += c === 0x22 ? '\\"' : c === 0x5c ? '\\\\' : v[i];
    else if (c <= 0xff) out += hex(c);
    else {
      const cp = v.codePointAt(i)!;
      if (cp > 0xffff) i++;
      for (const b of Buffer.from(String.fromCodePoint(cp), 'utf8')) out += hex(b);
    }
  }
  return out;
}

/** Absent values are `-` in every form; the others escaped (escapeLog). */
export function dash(v: string | number | undefined | null): string {
  if (v === undefined || v === null || v === '') return '-';
  return typeof v === 'number' ? String(v) : escapeLog(v);
}

/** W3C forms: escaped, and a value never contains a space (document 3: spaces written as `+`). */
export function plus(v: string | undefined | null): string {
  if (v === undefined || v === null || v === '') return '-';
  const e = escapeLog(v);
  return e.includes(' ') ? e.replace(/ /g, '+') : e;
}

export function reqHeader(tx: RecordFields, name: string): string | undefined {
  return joined(tx.req.headers[name]);
}

/** A field's value as one string (node gives a few repeated fields as arrays). */
export function joined(v: OutgoingHttpHeader | undefined): string | undefined {
  return v === undefined ? undefined : Array.isArray(v) ? v.join(', ') : String(v);
}

const headPatterns = new Map<string, RegExp>();

/**
 * A response field as sent. The stages pass their fields to writeHead, which node serializes
 * without keeping them (getHeader sees only setHeader's): they are read from the fields the
 * transaction kept (TxResponse), else from the serialized head itself.
 */
export function resHeader(tx: RecordFields, name: string): string | undefined {
  const v = tx.res.getHeader(name);
  if (v !== undefined) return joined(v);
  const fields = tx.responseFields;
  if (fields !== undefined) return fieldOf(fields, name);
  const head = (tx.res as unknown as { _header: string | null })._header;
  if (head === null || head === undefined) return undefined;
  let re = headPatterns.get(name);
  if (re === undefined) {
    re = new RegExp(`\\r\\n${name.replace(/[^a-z0-9-]/gi, '')}:[ \\t]*([^\\r]*)`, 'gi');
    headPatterns.set(name, re);
  }
  // Every line of the field, joined as one list (stacked codings are not one coding).
  re.lastIndex = 0;
  let value: string | undefined;
  for (let m = re.exec(head); m !== null; m = re.exec(head)) value = value === undefined ? m[1] : `${value}, ${m[1]}`;
  return value;
}

/** `name` (lower case) in writeHead's fields: a flat [name, value, ...] list or an object. */
function fieldOf(fields: OutgoingHttpHeaders | OutgoingHttpHeader[], name: string): string | undefined {
  if (Array.isArray(fields)) {
    for (let i = 0; i < fields.length; i += 2) {
      const n = fields[i];
      if (typeof n === 'string' && n.length === name.length && (n === name || n.toLowerCase() === name)) return joined(fields[i + 1]);
    }
    return undefined;
  }
  const v = fields[name];
  if (v !== undefined) return joined(v);
  // Stages write lower-case names; a field kept in its origin's spelling is found the long way.
  for (const n in fields) if (n.length === name.length && n.toLowerCase() === name) return joined(fields[n]);
  return undefined;
}

/**
 * The client address as `xff` asks (document 3), used for the client field of every form:
 * `all` the client's X-Forwarded-For then the client IP, `clientIp` the client IP alone,
 * `trimClientIp` the X-Forwarded-For when there is one, else the client IP. A sibling hand-off
 * carries the client's own X-Forwarded-For plus the client, so the owner's record says the same.
 */
export function clientField(tx: RecordFields, mode: XffMode): string {
  return clientFieldOf(tx.clientAddress, reqHeader(tx, 'x-forwarded-for'), mode);
}

/** clientField from the client address and the request's X-Forwarded-For. */
export function clientFieldOf(ip: string, xff: string | undefined, mode: XffMode): string {
  if (mode === 'clientIp') return ip;
  if (xff === undefined || xff === '') return ip;
  const list = xff.replace(/\s+/g, '');
  return mode === 'all' ? `${list},${ip}` : list;
}

/** Path and query of the target as received (or as rewritten: accessLogUrl), split at the first `?`. */
export function stemAndQuery(tx: RecordFields): [string, string] {
  const u = tx.loggedUrl;
  const q = u.indexOf('?');
  return q < 0 ? [u, ''] : [u.slice(0, q), u.slice(q + 1)];
}

/** The user of Basic authorization, if the client sent one. */
export function username(tx: RecordFields): string | undefined {
  return usernameOf(reqHeader(tx, 'authorization'));
}

/** username from the request's Authorization. */
export function usernameOf(a: string | undefined): string | undefined {
  if (a === undefined || !/^basic /i.test(a)) return undefined;
  const decoded = Buffer.from(a.slice(6).trim(), 'base64').toString('latin1');
  const c = decoded.indexOf(':');
  return c > 0 ? decoded.slice(0, c) : undefined;
}

/**
 * Content codings `sc-resinfo` names: document 3's gzip and deflate, and the br and zstd the
 * server's own compression makes (functions.compression).
 */
export const COMPRESSIONS: ReadonlySet<string> = new Set(['gzip', 'deflate', 'br', 'zstd']);

/** `sc-resinfo`: content coding, TLS version and `Bypass` (document 3's order), joined by `+`. */
export function resInfo(tx: RecordFields): string {
  const parts: string[] = [];
  const ce = resHeader(tx, 'content-encoding');
  if (ce !== undefined && COMPRESSIONS.has(ce)) parts.push(ce);
  if (tx.connection.tls !== undefined) parts.push(tx.connection.tls);
  if (tx.bypass !== 0) parts.push(tx.bypass === 2 ? 'Bypass/instant' : 'Bypass');
  return parts.length === 0 ? '-' : parts.join('+');
}

/** `x-fallback` / `%L`: the hosts the fallbacks routed the request to, joined by `+`. */
export function fallbackHosts(tx: RecordFields): string {
  const fb = tx.fallback;
  return fb === undefined ? '-' : fb.hosts.join('+');
}

/** The first line of the request, as Apache's `%r`; `-` for a refused request whose line never arrived whole (refused.ts), as nginx writes it. */
export function requestLine(tx: RecordFields): string {
  return tx.method === '-' ? '-' : `${tx.method} ${tx.urlReceived} HTTP/${tx.httpVersion}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/**
 * Times of the line, UTC. A busy log writes many lines per second: the strings of the current
 * second are kept and reused.
 */
export class LineClock {
  private sec = -1;
  private w3c = '';
  private apache = '';

  /** `yyyy-mm-dd hh:mm:ss` (the W3C `date time` pair). */
  w3cAt(ms: number): string {
    this.update(ms);
    return this.w3c;
  }

  /** `dd/Mon/yyyy:hh:mm:ss +0000` (Apache's `%t` without the brackets). */
  apacheAt(ms: number): string {
    this.update(ms);
    return this.apache;
  }

  private update(ms: number): void {
    const sec = Math.floor(ms / 1000);
    if (sec === this.sec) return;
    this.sec = sec;
    const d = new Date(sec * 1000);
    const Y = d.getUTCFullYear(), M = d.getUTCMonth(), D = p2(d.getUTCDate());
    const hms = `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
    this.w3c = `${Y}-${p2(M + 1)}-${D} ${hms}`;
    this.apache = `${D}/${MONTHS[M]}/${Y}:${hms} +0000`;
  }
}

/** strftime for `%{format}t` (UTC): %Y %y %m %d %e %H %M %S %b %a %j %s %z %Z %L(ms) %%. */
export function strftime(format: string, ms: number): string {
  const d = new Date(ms);
  return format.replace(/%([YymdeHMSbajszZL%])/g, (_m, c: string) => {
    switch (c) {
      case 'Y': return String(d.getUTCFullYear());
      case 'y': return p2(d.getUTCFullYear() % 100);
      case 'm': return p2(d.getUTCMonth() + 1);
      case 'd': return p2(d.getUTCDate());
      case 'e': return String(d.getUTCDate()).padStart(2, ' ');
      case 'H': return p2(d.getUTCHours());
      case 'M': return p2(d.getUTCMinutes());
      case 'S': return p2(d.getUTCSeconds());
      case 'b': return MONTHS[d.getUTCMonth()]!;
      case 'a': return ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()]!;
      case 'j': return String(Math.floor((ms - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1).padStart(3, '0');
      case 's': return String(Math.floor(ms / 1000));
      case 'z': return '+0000';
      case 'Z': return 'UTC';
      case 'L': return String(ms % 1000).padStart(3, '0');
      default: return '%';
    }
  });
}
