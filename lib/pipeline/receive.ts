// Step "receive", the first of the table (steps.ts): the bounds checks the parser leaves to us,
// the target form, the virtual host, the host's limits, the marks of a sibling's hand-off. The
// transaction and its record exist already (steps.ts creates and tracks them before this step).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HostRuntime } from './parts/host-runtime.js';
import { sendError } from './parts/respond.js';
import { SIBLING_HEADER } from './parts/hand-off.js';
import { CTX_HEADER, HOOKED_HEADER } from './parts/sibling-header.js';
import { hookedFrom } from './parts/hook-hand-off.js';
import { parseTarget } from './parts/target.js';
import type { TransactionRecord } from './parts/transaction.js';
import { workerCounters } from './parts/counters.js';
import { h2Head, isH2 } from './parts/h2.js';
import { HOOK_CTX_HEADER } from './hook.js';
import { startTrace } from './parts/setting-trace.js';
import { DONE, type Limits, type Next } from './parts/runtime-state.js';

const ALLOW = 'GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Size of the header section, how many Host fields it has, and whether its Transfer-Encoding is
 * one we implement, in one pass over rawHeaders (every field: the server keeps them all).
 * `coding`: 0 no Transfer-Encoding, 1 exactly `chunked`, 2 anything else.
 */
interface HeadShape { bytes: number; fieldCount: number; hosts: number; coding: 0 | 1 | 2 }
const shape: HeadShape = { bytes: 0, fieldCount: 0, hosts: 0, coding: 0 };

function measureHead(raw: string[]): HeadShape {
  let bytes = 0;
  let hosts = 0;
  let coding: 0 | 1 | 2 = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    bytes += name.length + raw[i + 1]!.length + 4;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
    else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') {
      // A second field line adds codings (`gzip` then `chunked`): more than chunked alone.
      coding = coding === 0 && raw[i + 1]!.trim().toLowerCase() === 'chunked' ? 1 : 2;
    }
  }
  // One shared object: the handler reads it before anything else can run.
  shape.bytes = bytes;
  shape.fieldCount = raw.length >> 1;
  shape.hosts = hosts;
  shape.coding = coding;
  return shape;
}

/**
 * The same shape for an HTTP/2 stream (h2.ts): pseudo-headers are not fields, the host is
 * `:authority`, and `coding` 1 stands for content in DATA frames (there is no transfer coding).
 */
function h2Shape(req: IncomingMessage): HeadShape {
  const h = h2Head(req);
  shape.bytes = h.bytes;
  shape.fieldCount = h.fieldCount;
  shape.hosts = h.host === null ? 2 : 1;
  shape.coding = h.hasContent ? 1 : 0;
  return shape;
}

/** Content in a GET or HEAD: a Transfer-Encoding, or a Content-Length other than 0. */
function carriesContent(req: IncomingMessage, coding: number): boolean {
  if (coding !== 0) return true;
  const cl = req.headers['content-length'];
  return cl !== undefined && Number(cl) !== 0;
}

/**
 * Host = uri-host [ ":" port ] (RFC 9110 7.2, RFC 3986 3.2.2): an IP-literal in brackets or a
 * reg-name (unreserved, pct-encoded, sub-delims), then digits. Empty is allowed (RFC 9112 3.2).
 */
const HOST_VALUE = /^(?:\[[0-9A-Za-z:._~!$&'()*+,;=-]+\]|[0-9A-Za-z._~!$&'()*+,;=%-]*)(?::[0-9]*)?$/;

/** The last Host value found valid: a client sends the same one on every request. */
let lastValidHost = '';

function validHostValue(value: string): boolean {
  if (value === lastValidHost) return true;
  if (!HOST_VALUE.test(value)) return false;
  lastValidHost = value;
  return true;
}

/** The client limits of a routed host (its functions over the global ones). */
function hostLimits(host: HostRuntime): Limits {
  return host.setting.functions.network.http.frontEnd;
}

/**
 * The request's first step: DONE when it answered (an error of the request's form or bounds,
 * no host, OPTIONS *), else the rules' first step.
 */
export function receiveStep(tx: TransactionRecord): Next {
  const { req, res, port } = tx;
  const state = tx.runtime!;
  const rawUrl = tx.urlReceived;
  const head = framed(tx);
  if (head === undefined) return DONE;
  const headBytes = head.bytes;
  const fieldCount = head.fieldCount;
  const hostHeader = req.headers.host;
  if (req.method === 'CONNECT') return refuse(res, 405, { allow: ALLOW });
  const target = parseTarget(rawUrl, hostHeader);
  if (target === 'bad-target') return refuse(res, 400, undefined, true);
  // HTTP/1.1 requires a Host (node answers 400 itself); HTTP/1.0 may omit it and then only the
  // default host can serve it.
  const localAddress = port === undefined ? undefined : req.socket.localAddress;
  tx.localAddress = localAddress;
  let host = state.table.route(target.host, port, localAddress);
  if (host?.facade !== undefined) host = host.facade;
  tx.host = host;
  if (host !== undefined && tx.sessionRow === 0) tx.sessionRow = workerCounters.routed(host.counterSlot);
  tx.url = target.url;
  // The URL and header limits are the routed host's own (functions inside a host override the
  // global ones); with no host, the global ones.
  const limits = host === undefined ? state.limits : hostLimits(host);
  if (rawUrl.length > limits.maxUrlLength) return refuse(res, 414, undefined, true);
  if (headBytes > limits.maxHeaderSize) return refuse(res, 431, undefined, true);
  if (fieldCount > limits.maxHeaderCount) return refuse(res, 431, undefined, true);
  if (host === undefined) return refuse(res, 404);
  if (state.traceKeyword !== undefined) startTrace(tx, state.traceKeyword);
  takeMarks(tx);
  if (target.url === '*') {
    // OPTIONS * asks about the server in general (RFC 9110 9.3.7): that is us, not an origin.
    if (req.method !== 'OPTIONS') return refuse(res, 400, undefined, true);
    tx.status = 200;
    res.writeHead(200, { allow: ALLOW, 'content-length': '0' });
    res.end();
    return DONE;
  }
  tx.ruleHost = target.host;
  return 'rewrite';
}

/**
 * The head's size and the framing checks the parser leaves to us; undefined when it refused the
 * request (the answer is sent).
 */
function framed(tx: TransactionRecord): HeadShape | undefined {
  const { req, res } = tx;
  let head: HeadShape;
  if (req.httpVersionMajor === 1) head = measureHead(req.rawHeaders);
  else if (isH2(req)) head = h2Shape(req);
  // llhttp reads HTTP/0.9 (no version: a request line with fields after it reaches us) and 2.0
  // request lines as HTTP/1.x. 0.9 is a malformed line for HTTP/1.1 (RFC 9112 3); another major
  // version is one we do not speak (RFC 9110 15.6.6). HTTP/2 comes as streams, not as a line.
  else return refused(res, req.httpVersionMajor === 0 ? 400 : 505);
  // Request line (method SP target SP HTTP/x.y CRLF) and the empty line after the fields.
  tx.requestHeadBytes = head.bytes + tx.method.length + tx.urlReceived.length + 14;
  // RFC 9112 3.2: more than one Host, or an invalid one, is a 400 (node keeps the first silently,
  // and two parties reading different Hosts is a cache-poisoning vector). HTTP/2: a Host that
  // differs from :authority counts as a second one (h2Shape).
  if (head.hosts > 1) return refused(res, 400);
  const hostHeader = req.headers.host;
  if (hostHeader !== undefined && !validHostValue(hostHeader)) return refused(res, 400);
  // A transfer coding we do not implement (RFC 9112 6.1): llhttp decodes only the final chunked
  // and would hand the origin the still-coded bytes as the body. Chunked not last is its 400.
  if (head.coding === 2) return refused(res, 501);
  // Content in a GET or HEAD has no defined semantics (RFC 9110 9.3.1/9.3.2): forwarded, it
  // would make a cached answer depend on bytes the cache key ignores; dropped, the client's
  // request would silently change. Refused, and the connection closed so the unread body is
  // never taken for a request (RFC 9110 9.3.1 names that smuggling risk).
  if ((req.method === 'GET' || req.method === 'HEAD') && carriesContent(req, head.coding)) return refused(res, 400);
  return head;
}

/** A framing error: answered, and the connection closed (what follows cannot be trusted). */
function refused(res: ServerResponse, status: number): undefined {
  sendError(res, status, undefined, true);
  return undefined;
}

/**
 * Only the internal port (no `port`) trusts a sibling's marks; a hook calling the runtime back
 * names the chain it belongs to.
 */
function takeMarks(tx: TransactionRecord): void {
  const { req, port } = tx;
  if (port === undefined && req.headers[SIBLING_HEADER] !== undefined) {
    tx.fromSibling = true;
    const ctx = req.headers[CTX_HEADER];
    if (typeof ctx === 'string') tx.ctxId = ctx;
    const hooked = req.headers[HOOKED_HEADER];
    if (typeof hooked === 'string') tx.hook = hookedFrom(hooked);
  } else {
    // A hook calling the runtime back names the chain it belongs to (document 2), so its
    // request logs under the same x-ctx-id. Only a UUID is taken: it only labels log lines.
    const chain = req.headers[HOOK_CTX_HEADER];
    if (typeof chain === 'string' && UUID.test(chain)) tx.ctxId = chain.toLowerCase();
  }
}

/** An error answer (respond.ts `sendError`): the table ends here. */
function refuse(res: ServerResponse, status: number, fields?: Record<string, string>, close = false): typeof DONE {
  sendError(res, status, fields, close);
  return DONE;
}
