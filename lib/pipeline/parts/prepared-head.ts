// A full hit's head over HTTP/1, written from text prepared once per stored copy. node's
// writeHead takes the prepared field list (stored-view.ts) and, for every answer, checks each
// name and value against the token and field-value rules, looks at each name for the fields it
// treats specially, and joins them into the head: a tenth of a hit's CPU besides the write
// itself. A stored copy's fields do not change, so that work is done once per copy here: the
// fields are checked with node's own validators and joined, and an answer adds only what is its
// own (Age, X-Cache, Cache-Status) and what node adds itself (Connection, Keep-Alive), then sets
// the state node's writeHead leaves on the response. Whatever node would treat differently (a
// field it acts on, a value it would refuse, a copy without Date, fields set on the response
// beforehand, a head edited by rules or traced, a status without a body) takes node's writeHead
// instead, as does a node whose response does not carry the state this relies on.
import { STATUS_CODES, validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import { markConnectionClosing, TxResponse } from './tx-response.js';
import { setsAnswerFields } from './answer-fields.js';
import type { StoredView } from './stored-view.js';

/** Fields node's writeHead acts on (framing, the connection, 100-continue, latin1 filenames). */
const NODE_FIELDS = new Set(['connection', 'transfer-encoding', 'keep-alive', 'trailer', 'expect', 'content-disposition', 'content-length', 'date']);

/**
 * The fields of `head` but its last three (Age, X-Cache, Cache-Status) as node joins them, or
 * undefined when node's writeHead must see them: a value that is a list, a field node acts on
 * (but Content-Length, which must be there, and Date, which must be there so node adds none),
 * a name or value node would refuse (it then throws, as it did).
 */
function preparedText(head: readonly (string | string[])[], size: number): string | undefined {
  // Joined, not added up with +=: that makes a tree of string pieces, which the socket write of
  // every answer walks again to copy it out (the head of each answer is this text and a few more pieces).
  const lines: string[] = [];
  let date = false;
  let length = false;
  for (let i = 0; i < head.length - 6; i += 2) {
    const name = head[i] as string;
    const value = head[i + 1]!;
    if (typeof value !== 'string') return undefined;
    const lower = name.toLowerCase();
    if (NODE_FIELDS.has(lower)) {
      if (lower === 'date' && !date) date = true;
      else if (lower === 'content-length' && !length && value === String(size)) length = true;
      else return undefined;
    }
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      return undefined;
    }
    lines.push(`${name}: ${value}\r\n`);
  }
  return date && length ? lines.join('') : undefined;
}

/** The response state node's writeHead reads and leaves (node:_http_outgoing, _http_server). */
interface NodeResponse extends ServerResponse {
  _header: string | null;
  _headerSent: boolean;
  _last: boolean;
  _contentLength: number | null;
  _removedConnection: boolean;
  _removedContLen: boolean;
  _removedTE: boolean;
  _defaultKeepAlive: boolean;
  _keepAliveTimeout: number;
  _maxRequestsPerSocket: number;
  _expect_continue: boolean;
  _sent100: boolean;
  maxRequestsOnConnectionReached: boolean;
  [key: symbol]: unknown;
}

/**
 * node's slot for the fields set with setHeader (kOutHeaders), found on the first response;
 * null when this node's response lacks it or any of the state above (node's writeHead then).
 */
let outHeaders: symbol | null | undefined;

function slotOf(res: NodeResponse): symbol | null {
  const s = Object.getOwnPropertySymbols(res).find((k) => k.description === 'kOutHeaders');
  const known = typeof res._removedConnection === 'boolean' && typeof res._removedContLen === 'boolean' && typeof res._removedTE === 'boolean'
    && typeof res._defaultKeepAlive === 'boolean' && typeof res._headerSent === 'boolean' && '_contentLength' in res && '_last' in res;
  return s !== undefined && known ? s : null;
}

/** The status lines by status (the few a cache answers with). */
const statusLines = new Map<number, string>();

function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) statusLines.set(status, (line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`));
  return line;
}

/** node's Connection and Keep-Alive lines for this response's timeout and request limit, the last ones kept. */
let lastTimeout = -1;
let lastMax = -1;
let lastKeepAlive = '';
const KEEP_ALIVE = 'Connection: keep-alive\r\n';
const CLOSE = 'Connection: close\r\n';

function keepAliveLines(res: NodeResponse): string {
  if (!res._keepAliveTimeout || !res._defaultKeepAlive) return KEEP_ALIVE;
  const max = ~~res._maxRequestsPerSocket;
  if (res._keepAliveTimeout !== lastTimeout || max !== lastMax) {
    lastTimeout = res._keepAliveTimeout;
    lastMax = max;
    lastKeepAlive = `${KEEP_ALIVE}Keep-Alive: timeout=${Math.floor(lastTimeout / 1000)}${max > 0 ? `, max=${max}` : ''}\r\n`;
  }
  return lastKeepAlive;
}

/**
 * The last head written, and what it was made of: a copy hit again within the same second (a
 * popular object) gets the same text, which node then writes without joining it again (a
 * joined string is flattened once, by its first write).
 */
const lastHead: { status: number; text: string; age: string; result: string; cacheStatus: string | undefined; connection: string; head: string } = {
  status: 0, text: '', age: '', result: '', cacheStatus: undefined, connection: '', head: '',
};

/** `cacheStatus` undefined: no Cache-Status field. */
function headText(status: number, text: string, age: string, result: string, cacheStatus: string | undefined, connection: string): string {
  const m = lastHead;
  if (m.text === text && m.age === age && m.result === result && m.cacheStatus === cacheStatus && m.connection === connection && m.status === status) return m.head;
  const cs = cacheStatus === undefined ? '' : `cache-status: ${cacheStatus}\r\n`;
  m.head = `${statusLine(status)}${text}age: ${age}\r\nx-cache: ${result}\r\n${cs}${connection}\r\n`;
  m.status = status; m.text = text; m.age = age; m.result = result; m.cacheStatus = cacheStatus; m.connection = connection;
  return m.head;
}

/** node's check of a field value (checkInvalidHeaderChar), for this answer's Cache-Status. */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Writes the head of a full hit (`fields`: the view's head with this answer's values,
 * fullAnswerHead) as node's writeHead would, from the view's prepared text. False when it did
 * not (see the head of this file): the caller gives the fields to writeHead then.
 */
export function writePreparedHead(res: ServerResponse, status: number, view: StoredView, fields: readonly (string | string[])[], size: number): boolean {
  if (!(res instanceof TxResponse)) return false;
  const r = res as unknown as NodeResponse;
  const tx = res.tx;
  if (tx === undefined || tx.responseEdits !== undefined || tx.fallback !== undefined || tx.trace !== undefined) return false;
  if (status < 200 || status === 204 || status === 304 || r._header || r.statusMessage || (r._expect_continue && !r._sent100)) return false;
  if (r._removedConnection || r._removedContLen || r._removedTE) return false;
  const slot = outHeaders === undefined ? (outHeaders = slotOf(r)) : outHeaders;
  if (slot === null) return false;
  let text = view.preparedText;
  if (text === null) text = view.preparedText = preparedText(view.head, size);
  if (text === undefined) return false;
  const n = fields.length;
  const cs = fields[n - 1]!;
  // (The last head's Cache-Status passed this check already: a plain hit's value is a table's.)
  if (typeof cs === 'string' ? cs !== lastHead.cacheStatus && INVALID_VALUE.test(cs) : cs.length > 0) return false;
  // Fields set on the response beforehand, or the host's answer fields about to be: node merges them.
  if (r[slot] != null || setsAnswerFields(tx)) return false;
  tx.answerStarts();
  tx.responseFields = fields as string[];
  // node's keep-alive rule for an answer with Content-Length (_storeHeader).
  let connection: string;
  if (!r.shouldKeepAlive) { r._last = true; connection = CLOSE; }
  else if (r.maxRequestsOnConnectionReached) connection = CLOSE;
  else connection = keepAliveLines(r);
  r.statusCode = status;
  r.statusMessage = STATUS_CODES[status] ?? 'unknown';
  r._contentLength = size;
  // An empty Cache-Status list is no field.
  r._header = headText(status, text, fields[n - 5] as string, fields[n - 3] as string, typeof cs === 'string' ? cs : undefined, connection);
  r._headerSent = false;
  if (r._last) markConnectionClosing((res.req as IncomingMessage).socket);
  return true;
}
