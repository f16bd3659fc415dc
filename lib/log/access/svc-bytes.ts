// The svc form written straight into a batch's bytes (lib/log/ship.ts), field by field: the same
// bytes as svcLine's UTF-8 (forms.ts), without building the line as a string first. An access
// log on for every request must cost next to nothing beside the request (issue 11: hit-1k keeps
// >= 0.85 of the same build without the log); short ASCII values are copied by a JS loop, which
// beats a call into Buffer.write per field, and numbers are written as digits.
import type { TransactionRecord } from '../../pipeline/transaction.js';
import { clientField, fallbackHosts, reqHeader, resHeader, username } from './fields.js';
import type { LineContext } from './forms.js';

const SPACE = 32, PLUS = 43, DASH = 45, ZERO = 48, NL = 10;

// The line being written: module state, so writing one allocates nothing.
const EMPTY = Buffer.alloc(0);
let buf: Buffer = EMPTY;
let o = 0;
let full = false;

/** A value as is; UTF-8 from its first non-ASCII unit on, as Buffer.write would. */
function raw(s: string): void {
  const n = s.length;
  if (o + n * 3 > buf.length) { full = true; return; }
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) { o += buf.write(s.slice(i), o); return; }
    buf[o++] = c;
  }
}

/** W3C value: `-` when absent, spaces as `+` (fields.ts plus()). */
function plus(s: string | undefined | null): void {
  if (s === undefined || s === null || s === '') { dash(); return; }
  const n = s.length;
  if (o + n * 3 > buf.length) { full = true; return; }
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) { o += buf.write(s.slice(i).replace(/ /g, '+'), o); return; }
    buf[o++] = c === SPACE ? PLUS : c;
  }
}

function dash(): void {
  if (o + 1 > buf.length) { full = true; return; }
  buf[o++] = DASH;
}

function sp(): void {
  if (o + 1 > buf.length) { full = true; return; }
  buf[o++] = SPACE;
}

/** A number as String() writes it; plain digits for the non-negative integers of a line. */
function num(v: number): void {
  if (!(v >= 0 && Number.isSafeInteger(v))) { raw(String(v)); return; }
  if (v < 1e9) { digits(v, width(v)); return; }
  // Session ids pass 2^32: the high part first, then the low nine digits with int arithmetic.
  const hi = Math.floor(v / 1e9);
  num(hi);
  digits(v - hi * 1e9, 9);
}

function width(v: number): number {
  let n = 1;
  for (let t = v; t >= 10; t = (t / 10) | 0) n++;
  return n;
}

/** `v` (< 1e9) as `n` digits, zero-padded. */
function digits(v: number, n: number): void {
  if (o + n > buf.length) { full = true; return; }
  for (let i = o + n - 1, t = v; i >= o; i--, t = (t / 10) | 0) buf[i] = ZERO + (t % 10);
  o += n;
}

/** time-taken and time-response: whole ms, `-` when never reached. */
function ms(v: number): void {
  if (v < 0) dash();
  else num(Math.round(v));
}

/** `sc-resinfo` as fields.ts resInfo() joins it, without the array. */
function resInfo(tx: TransactionRecord, ce: string | undefined): void {
  let parts = 0;
  if (ce === 'gzip' || ce === 'deflate') { raw(ce); parts++; }
  const tls = tx.connection.tls;
  if (tls !== undefined) { if (parts++ > 0) plusSign(); raw(tls); }
  if (tx.bypass !== 0) { if (parts++ > 0) plusSign(); raw(tx.bypass === 2 ? 'Bypass/instant' : 'Bypass'); }
  if (parts === 0) dash();
}

// session-id: consecutive transactions of a worker mostly have consecutive ids, so the digits
// of the previous one are kept and counted up in place.
const idDigits = Buffer.alloc(16);
let lastId = -1;
let idStart = idDigits.length;

function sessionId(v: number): void {
  if (v !== lastId) {
    if (!(v >= 0 && v < 1e16 && Number.isSafeInteger(v))) { num(v); return; }
    if (v !== lastId + 1 || !countUp()) {
      let t = v;
      idStart = idDigits.length;
      do { const q = Math.floor(t / 10); idDigits[--idStart] = ZERO + (t - q * 10); t = q; } while (t > 0);
    }
    lastId = v;
  }
  const n = idDigits.length - idStart;
  if (o + n > buf.length) { full = true; return; }
  for (let i = idStart; i < idDigits.length; i++) buf[o++] = idDigits[i]!;
}

/** The kept digits plus one; false when that needs one more digit (then they are rewritten). */
function countUp(): boolean {
  for (let i = idDigits.length - 1; i >= idStart; i--) {
    if (idDigits[i] !== ZERO + 9) { idDigits[i]++; return true; }
    idDigits[i] = ZERO;
  }
  return false;
}

function plusSign(): void {
  if (o + 1 > buf.length) { full = true; return; }
  buf[o++] = PLUS;
}

/**
 * Writes the svc line of `tx` into `into` from `at`; returns where it ends, or -1 when it does not
 * fit (the caller then takes the string path, which ships the batch first).
 */
export function svcBytes(tx: TransactionRecord, c: LineContext, into: Buffer, at: number): number {
  buf = into; o = at; full = false;
  raw(c.clock.w3cAt(c.now)); sp(); raw(tx.serverAddress); sp(); raw(tx.method); sp();
  // cs-uri-stem and cs-uri-query: the logged target split at its first `?` (fields.ts stemAndQuery).
  const u = tx.loggedUrl;
  const q = u.indexOf('?');
  if (q < 0) { plus(u); sp(); dash(); } else { plus(u.slice(0, q)); sp(); plus(u.slice(q + 1)); }
  sp(); num(tx.serverPort); sp();
  plus(username(tx)); sp(); plus(clientField(tx, c.xff)); sp(); plus(reqHeader(tx, 'user-agent')); sp(); num(tx.status); sp();
  num(tx.responseHeadBytes + tx.responseBodyBytes); sp(); ms(tx.totalMs); sp(); plus(reqHeader(tx, 'referer')); sp(); resInfo(tx, resHeader(tx, 'content-encoding')); sp();
  plus(reqHeader(tx, 'range')); sp(); raw(String(tx.cacheResult)); sp(); plus(reqHeader(tx, 'accept-encoding')); sp(); sessionId(tx.sessionId); sp();
  plus(resHeader(tx, 'content-length')); sp(); ms(tx.firstByteMs); sp(); raw(tx.completed ? 'c' : 'x'); sp(); raw(fallbackHosts(tx)); sp();
  raw(tx.ctxId); sp();
  if (tx.hookLinked === '') dash(); else raw(tx.hookLinked);
  sp();
  const logName = tx.host?.logName;
  if (logName === undefined || logName === '') dash(); else raw(logName);
  sp(); plus(reqHeader(tx, 'host'));
  if (o + 1 > buf.length) full = true;
  else buf[o++] = NL;
  const end = full ? -1 : o;
  buf = EMPTY;
  return end;
}
