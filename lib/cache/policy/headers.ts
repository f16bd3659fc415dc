// Small header helpers shared by the policy modules. Headers arrive in node's
// IncomingHttpHeaders shape: lower-case names, repeated fields possibly as arrays.

type HeaderValue = string | string[] | undefined;
export type HeaderMap = Record<string, HeaderValue>;

/** The field value, repeated field lines combined with ', ' (RFC 9110 5.3). */
export function headerValue(headers: HeaderMap, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  return v.length === 0 ? undefined : v.length === 1 ? v[0] : v.join(', ');
}

/** Whether two values of one field are the same (a field given several times compared item by item). */
export function sameFieldValue(x: string | readonly string[] | undefined, y: string | readonly string[] | undefined): boolean {
  if (x === y) return true;
  if (x === undefined || y === undefined || typeof x === 'string' || typeof y === 'string' || x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** Whether two field sets have the same names with the same values (in any order), the names in `skip` aside. */
export function sameFields(a: Readonly<HeaderMap>, b: Readonly<HeaderMap>, skip?: ReadonlySet<string>): boolean {
  if (a === b) return true;
  let n = 0;
  for (const name in a) {
    if (skip?.has(name) === true) continue;
    if (!sameFieldValue(a[name], b[name])) return false;
    n++;
  }
  for (const name in b) if (skip?.has(name) !== true) n--;
  return n === 0;
}

/** True when a field occurs on more than one line (used where duplicates mean "invalid"). */
export function isRepeated(headers: HeaderMap, name: string): boolean {
  const v = headers[name];
  return Array.isArray(v) && v.length > 1;
}

const MONTHS = 'janfebmaraprmayjunjulaugsepoctnovdec';

/** The month named at s[at..at+3) (any case), 0-11, or -1; compared in place (every miss reads a Date). */
function monthIndex(s: string, at: number): number {
  // | 0x20 lower-cases an ASCII letter; no other character becomes one of the month letters.
  const a = s.charCodeAt(at) | 0x20, b = s.charCodeAt(at + 1) | 0x20, c = s.charCodeAt(at + 2) | 0x20;
  for (let i = 0; i < MONTHS.length; i += 3) {
    if (MONTHS.charCodeAt(i) === a && MONTHS.charCodeAt(i + 1) === b && MONTHS.charCodeAt(i + 2) === c) return i / 3;
  }
  return -1;
}

function digits(s: string, from: number, len: number): number {
  let n = 0;
  for (let i = from; i < from + len; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

function build(y: number, mo: number, d: number, hms: string, at: number): number {
  if (mo < 0 || d < 1 || d > 31) return NaN;
  const h = digits(hms, at, 2), mi = digits(hms, at + 3, 2), sec = digits(hms, at + 6, 2);
  if (h < 0 || mi < 0 || sec < 0 || hms[at + 2] !== ':' || hms[at + 5] !== ':' || h > 23 || mi > 59 || sec > 60) return NaN;
  return Date.UTC(y, mo, d, h, mi, sec);
}

/**
 * Parses an HTTP-date (RFC 9110 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime
 * forms recipients must accept. Anything else (e.g. Expires: 0) gives NaN; Date.parse is not
 * used because it accepts such values and reads asctime in local time.
 */
export function parseHttpDate(value: string | undefined): number {
  if (value === undefined) return NaN;
  // The Date of answers arriving within one second is the same text: parsed once.
  if (value === lastDate) return lastParsed;
  const t = parseDate(value);
  // Only an IMF-fixdate (29 characters): an RFC 850 date reads its century from today's year.
  if (value.length === 29) { lastDate = value; lastParsed = t; }
  return t;
}

/** The last IMF-fixdate parseHttpDate parsed, and what it gave. */
let lastDate: string | undefined;
let lastParsed = NaN;

function parseDate(value: string): number {
  const s = value.trim();
  const comma = s.indexOf(',');
  if (comma === 3 && s.length === 29 && s.endsWith(' GMT')) {
    // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
    const d = digits(s, 5, 2), y = digits(s, 12, 4);
    if (d < 0 || y < 0 || s[4] !== ' ' || s[7] !== ' ' || s[11] !== ' ' || s[16] !== ' ') return NaN;
    return build(y, monthIndex(s, 8), d, s, 17);
  }
  if (comma > 3 && s.endsWith(' GMT') && s.length === comma + 24) {
    // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"; two-digit years more than 50 years ahead are in the past.
    const b = comma + 2;
    const d = digits(s, b, 2), yy = digits(s, b + 7, 2);
    if (d < 0 || yy < 0 || s[b + 2] !== '-' || s[b + 6] !== '-' || s[b + 9] !== ' ') return NaN;
    const nowY = new Date().getUTCFullYear();
    let y = Math.floor(nowY / 100) * 100 + yy;
    if (y > nowY + 50) y -= 100;
    return build(y, monthIndex(s, b + 3), d, s, b + 10);
  }
  if (comma < 0 && s.length === 24) {
    // asctime: "Sun Nov  6 08:49:37 1994" (UTC by definition)
    const d = s[8] === ' ' ? digits(s, 9, 1) : digits(s, 8, 2);
    const y = digits(s, 20, 4);
    if (d < 0 || y < 0 || s[3] !== ' ' || s[7] !== ' ' || s[10] !== ' ' || s[19] !== ' ') return NaN;
    return build(y, monthIndex(s, 4), d, s, 11);
  }
  return NaN;
}

/** IMF-fixdate for a time in milliseconds. */
export function formatHttpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

/** A validator exists when the response carries an ETag or a Last-Modified (RFC 9110 8.8). */
export function hasValidator(headers: HeaderMap): boolean {
  return headers['etag'] !== undefined || headers['last-modified'] !== undefined;
}
