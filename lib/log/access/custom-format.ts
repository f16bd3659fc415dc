// The `custom` form: `format` with the `%` codes of document 3, compiled once per host setting
// into a list of parts, so a line is one pass over small functions. A code may carry a
// status-code condition (`%400,501{User-agent}i`: the value only for those statuses, else `-`;
// `%!200,304{Referer}i`: except for those) and an argument in braces. Apache's `<`/`>` modifiers
// (`%>s`) are accepted and change nothing (one status per transaction here).
import { hookField } from '../../hook/answer.js';
import type { RecordFields } from '../../record/transaction.js';
import { clientField, escapeLog, fallbackHosts, reqHeader, requestLine, resHeader, stemAndQuery, strftime } from './fields.js';
import type { LineContext, LineFormat } from './forms.js';

type Part = string | ((tx: RecordFields, c: LineContext) => string);

export class FormatError extends Error {}

function cookie(tx: RecordFields, name: string): string | undefined {
  const all = reqHeader(tx, 'cookie');
  if (all === undefined) return undefined;
  for (const kv of all.split(';')) {
    const eq = kv.indexOf('=');
    if (eq > 0 && kv.slice(0, eq).trim() === name) return kv.slice(eq + 1).trim();
  }
  return undefined;
}

function queryValue(tx: RecordFields, key: string): string | undefined {
  const q = stemAndQuery(tx)[1];
  if (q === '') return undefined;
  return new URLSearchParams(q).get(key) ?? undefined;
}

// The values of the codes are escaped once, as a whole, where the line is put together (escapeLog):
// these two only stand in for an absent value and replace spaces.
const orDash = (v: string | undefined): string => (v === undefined || v === '' ? '-' : v);
const spaced = (v: string | undefined): string => (v === undefined || v === '' ? '-' : v.replace(/ /g, '+'));

const num = (v: number): string => (v < 0 ? '-' : String(Math.round(v)));

/** One code to its value function; `arg` is the braces' content (undefined when none). */
function code(letter: string, arg: string | undefined): Part {
  const need = (): string => {
    if (arg === undefined || arg === '') throw new FormatError(`%${letter} needs {name}`);
    return arg;
  };
  switch (letter) {
    case 'a': return (tx, c) => clientField(tx, c.xff);
    case 'A': return (tx) => tx.serverAddress;
    case 'b': return (tx) => String(tx.responseBodyBytes);
    case 'B': return (tx) => (tx.totalMs > 0 ? String(Math.round(tx.responseBodyBytes / (tx.totalMs / 1000))) : '-');
    case 'c': {
      if (arg === undefined) return (tx) => orDash(resHeader(tx, 'content-length'));
      const name = arg.endsWith('=') ? arg.slice(0, -1) : arg;
      return (tx) => orDash(cookie(tx, name));
    }
    case 'C': { const n = need(); return (tx) => orDash(cookie(tx, n)); }
    case 'D': return (tx) => num(tx.totalMs);
    case 'R': return (tx) => num(tx.firstByteMs);
    case 'e': return (tx) => String(tx.sessionId);
    case 'E': return (tx) => tx.ctxId;
    case 'f': return (tx) => { const s = stemAndQuery(tx)[0]; return orDash(s.slice(s.lastIndexOf('/') + 1)); };
    case 'F': return (tx) => orDash(tx.hookLinked);
    case 'L': return fallbackHosts;
    case 'N': { const n = need(); return (tx) => spaced(tx.hook === undefined ? undefined : hookField(tx.hook.fields, n)); }
    case 'g': return (_tx, c) => c.clock.apacheAt(c.now);
    case 'G': { const n = need().toLowerCase(); return (tx) => spaced(reqHeader(tx, n)); }
    case 'h': return (tx) => orDash(reqHeader(tx, 'host'));
    case 'H': return (tx) => tx.protocol;
    case 'i': { const n = need().toLowerCase(); return (tx) => orDash(reqHeader(tx, n)); }
    case 'I': return (tx) => String(tx.requestHeadBytes + tx.requestBodyBytes);
    case 'O': return (tx) => String(tx.responseHeadBytes + tx.responseBodyBytes);
    case 'j': return (tx) => orDash(reqHeader(tx, 'range'));
    case 'k': return (tx) => orDash(reqHeader(tx, 'accept-encoding'));
    case 'K': return (tx) => `HTTP/${tx.httpVersion}`;
    case 'l': { const n = need().toLowerCase(); return (tx) => spaced(resHeader(tx, n)); }
    case 'o': { const n = need().toLowerCase(); return (tx) => orDash(resHeader(tx, n)); }
    case 'm': return (tx) => tx.method;
    case 'n': return () => orDash(arg);
    case 'P': return (tx) => String(tx.serverPort);
    case 'q': return (tx) => orDash(stemAndQuery(tx)[1]);
    case 'Q': { const n = need(); return (tx) => orDash(queryValue(tx, n)); }
    case 'r': return (tx) => requestLine(tx);
    case 's': return (tx) => String(tx.status);
    case 'S': return (tx) => String(tx.cacheResult);
    case 't': return arg === undefined ? (_tx, c) => `[${c.clock.apacheAt(c.now)}]` : (_tx, c) => strftime(arg, c.now);
    case 'T': return (tx) => String(Math.floor(tx.totalMs / 1000));
    // The scheme is the connection's: HTTP/2 runs over TLS or in cleartext (h2c).
    case 'u': return (tx) => `${tx.connection.tls === undefined ? 'http' : 'https'}://${reqHeader(tx, 'host') ?? tx.serverAddress}${tx.loggedUrl}`;
    case 'U': return (tx) => stemAndQuery(tx)[0];
    case 'X': return (tx) => (tx.completed ? 'C' : 'X');
    case 'x': return (tx) => (tx.completed ? 'c' : 'x');
    case 'y': return (tx) => String(tx.requestHeadBytes);
    case 'z': return (tx) => String(tx.responseHeadBytes);
    default: throw new FormatError(`unknown code %${letter}`);
  }
}

// % [!][status,status...] [<|>] [{arg}] letter
const CODE = /%(!?)((?:\d{3},)*\d{3})?[<>]?(?:\{([^}]*)\})?([A-Za-z%])/y;

/** Compiles a custom format; throws FormatError with the position of the first bad code. */
export function compileFormat(format: string): LineFormat {
  const parts: Part[] = [];
  let text = '';
  for (let i = 0; i < format.length;) {
    if (format[i] !== '%') { text += format[i]; i++; continue; }
    CODE.lastIndex = i;
    const m = CODE.exec(format);
    if (m === null) throw new FormatError(`invalid code at position ${i}: ${JSON.stringify(format.slice(i, i + 12))}`);
    i = CODE.lastIndex;
    const [, not, statuses, arg, letter] = m;
    if (letter === '%') { text += '%'; continue; }
    if (text !== '') { parts.push(text); text = ''; }
    let part = code(letter!, arg) as Exclude<Part, string>;
    if (statuses !== undefined) {
      const set = new Set(statuses.split(',').map(Number));
      const inner = part;
      const wanted = not !== '!';
      part = (tx, c) => (set.has(tx.status) === wanted ? inner(tx, c) : '-');
    }
    parts.push(part);
  }
  if (text !== '') parts.push(text);
  return (tx, c) => {
    let line = '';
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      // The format's own text as written; every value escaped as nginx does (no line break can
      // come from a value).
      line += typeof p === 'string' ? p : escapeLog(p(tx, c));
    }
    // One line per transaction whatever the format's own text holds.
    return `${line.replace(/[\r\n]/g, ' ')}\n`;
  };
}
