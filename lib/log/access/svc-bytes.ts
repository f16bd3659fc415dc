// The svc form written straight into a batch's bytes (lib/log/ship.ts), field by field: the same
// bytes as svcLine's UTF-8 (forms.ts), without building the line as a string first. An access
// log on for every request must cost next to nothing beside the request (issue 11: hit-1k keeps
// >= 0.85 of the same build without the log). So: the values are read once, the room they can
// take (4 bytes per UTF-16 unit escaped, 12 for
// the few values that can hold units beyond 0xFF) is checked once, and then every write is a plain
// store at a local offset; short ASCII values are copied by a JS loop, which beats a call into
// Buffer.write per field, and numbers are written as digits. (Module-level `let` offsets, a
// check per write and request fields looked up by a name in a variable cost about 690 ns a
// line, measured warm, against about 510 ns now.)
import type { RecordFields } from '../../record/transaction.js';
import { clientFieldOf, COMPRESSIONS, escapeLog, fallbackHosts, joined, resHeader, usernameOf } from './fields.js';
import type { LineContext } from './forms.js';

const SPACE = 32, PLUS = 43, DASH = 45, ZERO = 48, NL = 10;
/** Room for the numbers, the fixed values and the separators of a line. */
const FIXED_ROOM = 256;

type Value = string | undefined | null;

const len = (s: Value): number => (s === undefined || s === null ? 0 : s.length);

/** A unit escapeLog rewrites (fields.ts): a control byte, DEL, non-ASCII, `"` or `\\`. */
const unsafe = (c: number): boolean => c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c;

/**
 * An escaped (ASCII) value at `o`; returns where it ends even when the buffer ends first (a value
 * whose units beyond 0xFF the room check did not count): svcBytes then sees the line did not fit.
 */
function escaped(buf: Buffer, o: number, e: string): number {
  if (o < buf.length) buf.write(e, o, 'latin1');
  return o + e.length;
}

/** A value escaped as fields.ts escapeLog does: printable ASCII copied, the rest from the first unsafe unit on escaped. */
function raw(buf: Buffer, o: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (unsafe(c)) return escaped(buf, o + i, escapeLog(s.slice(i)));
    buf[o + i] = c;
  }
  return o + n;
}

/** W3C value: `-` when absent, spaces as `+` (fields.ts plus()); then the separating space. */
function plus(buf: Buffer, o: number, s: Value): number {
  if (s === undefined || s === null || s === '') {
    buf[o] = DASH;
    buf[o + 1] = SPACE;
    return o + 2;
  }
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (unsafe(c)) {
      const end = escaped(buf, o + i, escapeLog(s.slice(i)).replace(/ /g, '+'));
      buf[end] = SPACE;
      return end + 1;
    }
    buf[o + i] = c === SPACE ? PLUS : c;
  }
  buf[o + n] = SPACE;
  return o + n + 1;
}

/**
 * A value of ours known to be ASCII (the date, x-ctx-id, the cache result, an address, the
 * method token): one native copy, cheaper than the loop from about 16 characters on.
 */
function ascii(buf: Buffer, o: number, s: string): number {
  if (o < buf.length) buf.write(s, o, 'latin1');
  o += s.length;
  buf[o] = SPACE;
  return o + 1;
}

/** `raw` then the separating space. */
function field(buf: Buffer, o: number, s: string): number {
  o = raw(buf, o, s);
  buf[o] = SPACE;
  return o + 1;
}

/** A number as String() writes it; plain digits for the non-negative integers of a line. */
function num(buf: Buffer, o: number, v: number): number {
  if (!(v >= 0 && Number.isSafeInteger(v))) return raw(buf, o, String(v));
  if (v < 1e9) return digits(buf, o, v, width(v));
  // Session ids pass 2^32: the high part first, then the low nine digits with int arithmetic.
  const hi = Math.floor(v / 1e9);
  return digits(buf, num(buf, o, hi), v - hi * 1e9, 9);
}

function width(v: number): number {
  let n = 1;
  for (let t = v; t >= 10; t = (t / 10) | 0) n++;
  return n;
}

/** `v` (< 1e9) as `n` digits, zero-padded. */
function digits(buf: Buffer, o: number, v: number, n: number): number {
  for (let i = o + n - 1, t = v; i >= o; i--, t = (t / 10) | 0) buf[i] = ZERO + (t % 10);
  return o + n;
}

/** time-taken and time-response: whole ms, `-` when never reached; then the space. */
function ms(buf: Buffer, o: number, v: number): number {
  if (v < 0) buf[o++] = DASH;
  else o = num(buf, o, Math.round(v));
  buf[o] = SPACE;
  return o + 1;
}

/** `sc-resinfo` as fields.ts resInfo() joins it, without the array; then the space. */
function resInfo(buf: Buffer, o: number, tx: RecordFields, ce: string | undefined): number {
  const start = o;
  if (ce !== undefined && COMPRESSIONS.has(ce)) o = raw(buf, o, ce);
  const tls = tx.connection.tls;
  if (tls !== undefined) {
    if (o > start) buf[o++] = PLUS;
    o = raw(buf, o, tls);
  }
  if (tx.bypass !== 0) {
    if (o > start) buf[o++] = PLUS;
    o = raw(buf, o, tx.bypass === 2 ? 'Bypass/instant' : 'Bypass');
  }
  if (o === start) buf[o++] = DASH;
  buf[o] = SPACE;
  return o + 1;
}

// session-id: consecutive transactions of a worker mostly have consecutive ids, so the digits
// of the previous one are kept and counted up in place.
const idDigits = Buffer.alloc(16);
const ids = { last: -1, start: idDigits.length };

function sessionId(buf: Buffer, o: number, v: number): number {
  if (v !== ids.last) {
    if (!(v >= 0 && v < 1e16 && Number.isSafeInteger(v))) return num(buf, o, v);
    if (v !== ids.last + 1 || !countUp()) {
      let t = v;
      let i = idDigits.length;
      do { const q = Math.floor(t / 10); idDigits[--i] = ZERO + (t - q * 10); t = q; } while (t > 0);
      ids.start = i;
    }
    ids.last = v;
  }
  for (let i = ids.start; i < idDigits.length; i++) buf[o++] = idDigits[i]!;
  return o;
}

/** The kept digits plus one; false when that needs one more digit (then they are rewritten). */
function countUp(): boolean {
  for (let i = idDigits.length - 1; i >= ids.start; i--) {
    if (idDigits[i] !== ZERO + 9) { idDigits[i]++; return true; }
    idDigits[i] = ZERO;
  }
  return false;
}

/**
 * Writes the svc line of `tx` into `buf` from `at`; returns where it ends, or -1 when it may not
 * fit (the caller then takes the string path, which ships the batch first). Each request field
 * is read by its literal name: a load the engine caches per site, where a name in a variable
 * makes every lookup a generic one. One function on purpose: the values are read once and the
 * room checked once for the whole line; split, the values would travel as a dozen arguments
 * (or an object per line) to the writing half.
 */
export function svcBytes(tx: RecordFields, c: LineContext, buf: Buffer, at: number): number {
  const date = c.clock.w3cAt(c.now);
  const u = tx.loggedUrl;
  const h = tx.req.headers;
  const user = usernameOf(joined(h.authorization));
  const client = clientFieldOf(tx.clientAddress, joined(h['x-forwarded-for']), c.xff);
  const ua = joined(h['user-agent']);
  const referer = joined(h.referer);
  const ce = resHeader(tx, 'content-encoding');
  const range = joined(h.range);
  const cacheResult = String(tx.cacheResult);
  const ae = joined(h['accept-encoding']);
  const length = resHeader(tx, 'content-length');
  const fallback = fallbackHosts(tx);
  const logName = tx.host?.logName;
  const host = joined(h.host);
  const room = date.length + tx.serverAddress.length + tx.method.length + u.length + len(user) + client.length + len(ua) + len(referer) +
    len(ce) + len(range) + cacheResult.length + len(ae) + len(length) + fallback.length + tx.ctxId.length + tx.hookLinked.length + len(logName) +
    len(host) + len(tx.connection.tls);
  // Escaped, a unit takes up to 4 bytes (`\xHH`). Request fields and the user come as latin1
  // (one unit per byte received); the logged URL (a rewrite's) and the names of the setting can
  // hold units beyond 0xFF, 12 bytes each (three UTF-8 bytes, escaped).
  if (at + room * 4 + (u.length + len(logName) + fallback.length) * 8 + FIXED_ROOM > buf.length) return -1;
  let o = ascii(buf, at, date);
  o = field(buf, o, tx.serverAddress);
  o = field(buf, o, tx.method);
  // cs-uri-stem and cs-uri-query: the logged target split at its first `?` (fields.ts stemAndQuery).
  const q = u.indexOf('?');
  if (q < 0) { o = plus(buf, o, u); o = plus(buf, o, undefined); } else { o = plus(buf, o, u.slice(0, q)); o = plus(buf, o, u.slice(q + 1)); }
  o = num(buf, o, tx.serverPort);
  buf[o++] = SPACE;
  o = plus(buf, o, user);
  o = plus(buf, o, client);
  o = plus(buf, o, ua);
  o = num(buf, o, tx.status);
  buf[o++] = SPACE;
  o = num(buf, o, tx.responseHeadBytes + tx.responseBodyBytes);
  buf[o++] = SPACE;
  o = ms(buf, o, tx.totalMs);
  o = plus(buf, o, referer);
  o = resInfo(buf, o, tx, ce);
  o = plus(buf, o, range);
  o = field(buf, o, cacheResult);
  o = plus(buf, o, ae);
  o = sessionId(buf, o, tx.sessionId);
  buf[o++] = SPACE;
  o = plus(buf, o, length);
  o = ms(buf, o, tx.firstByteMs);
  buf[o++] = tx.completed ? 0x63 : 0x78; // c, x
  buf[o++] = SPACE;
  o = field(buf, o, fallback);
  o = ascii(buf, o, tx.ctxId);
  if (tx.hookLinked === '') { buf[o++] = DASH; buf[o++] = SPACE; } else o = field(buf, o, tx.hookLinked);
  if (logName === undefined || logName === '') { buf[o++] = DASH; buf[o++] = SPACE; } else o = field(buf, o, logName);
  o = plus(buf, o, host);
  // Past the end: stores there were dropped; the caller takes the string path.
  if (o > buf.length) return -1;
  buf[o - 1] = NL;
  return o;
}
