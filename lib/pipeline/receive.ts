// The worker's request entry: the transaction and its record are created and tracked (finish
// runs when it ends, however it ends), then bounds checks, target form, virtual host (stage
// "receive"), the hash-balance hand-off, then the serving stages.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HashRing } from '../balance/ring.js';
import type { HashKeyFunction } from '../balance/hash-key.js';
import type { LuaHash } from '../balance/lua-hash.js';
import type { HostRuntime } from './parts/host-runtime.js';
import { sendError } from './parts/respond.js';
import { SIBLING_HEADER, type Siblings } from './parts/hand-off.js';
import { CTX_HEADER, HOOKED_HEADER } from './parts/sibling-header.js';
import { hookedFrom } from './parts/hook-hand-off.js';
import { parseTarget } from './parts/target.js';
import { TransactionRecord, type Transaction } from './parts/transaction.js';
import { track } from './finish.js';
import { SessionIds } from './parts/session-ids.js';
import { workerCounters } from './parts/counters.js';
import { h2Head, isH2 } from './parts/h2.js';
import type { VhostTable } from '../routing/vhost-table.js';
import { modifyFront } from './modify.js';
import { bypass } from './bypass.js';
import { applyRewrites, ROUTING_LOOP, ROUTING_LOOP_TEXT, type Router } from './rewrite.js';
import { checkAccess, sendDenied } from './access.js';
import { callHook, HOOK_CTX_HEADER, hookSelects } from './hook.js';
import { startTrace } from './parts/setting-trace.js';
import { servePagedesk } from './pagedesk.js';

const ALLOW = 'GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Limits { maxUrlLength: number; maxHeaderSize: number; maxHeaderCount: number }

interface Balance {
  mode: 'rr' | 'hash';
  ring: HashRing;
  hashKey: HashKeyFunction;
  /** balance.luaPath's hash(key): the ring point of a key, -1 when the script failed on it. */
  luaHash: LuaHash | undefined;
  selfIndex: number;
  siblings: Siblings;
}

export interface RuntimeState {
  table: VhostTable<HostRuntime>;
  limits: Limits;
  balance: Balance;
  /** Serves a routed transaction (the cache stages, or plain proxying). */
  serve: (tx: Transaction) => void;
  /** meta.settingTrace.keyword when the trace is enabled. */
  traceKeyword: string | undefined;
}

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
 * `sessionIds`: the worker's allocator (blocks from the primary); without one (in-process use)
 * a local one that only has its fallback range.
 */
export function createHandler(getState: () => RuntimeState, sessionIds: SessionIds = new SessionIds()) {
  return function handle(req: IncomingMessage, res: ServerResponse, port: number | undefined): void {
    const state = getState();
    // First: every answer below, the error answers too, is a transaction that finish records.
    const tx = new TransactionRecord(req, res, sessionIds.take());
    track(tx);
    // A sibling's hand-off (the internal port: no `port`) is in the sibling's sessions already.
    if (port !== undefined) tx.sessionRow = workerCounters.begin();
    const rawUrl = tx.urlReceived;
    let head: HeadShape;
    if (req.httpVersionMajor === 1) head = measureHead(req.rawHeaders);
    else if (isH2(req)) head = h2Shape(req);
    // llhttp reads HTTP/0.9 (no version: a request line with fields after it reaches us) and 2.0
    // request lines as HTTP/1.x. 0.9 is a malformed line for HTTP/1.1 (RFC 9112 3); another major
    // version is one we do not speak (RFC 9110 15.6.6). HTTP/2 comes as streams, not as a line.
    else return sendError(res, req.httpVersionMajor === 0 ? 400 : 505, undefined, true);
    const headBytes = head.bytes;
    const fieldCount = head.fieldCount;
    // Request line (method SP target SP HTTP/x.y CRLF) and the empty line after the fields.
    tx.requestHeadBytes = headBytes + tx.method.length + rawUrl.length + 14;
    // RFC 9112 3.2: more than one Host, or an invalid one, is a 400 (node keeps the first silently,
    // and two parties reading different Hosts is a cache-poisoning vector). HTTP/2: a Host that
    // differs from :authority counts as a second one (h2Shape).
    if (head.hosts > 1) return sendError(res, 400, undefined, true);
    const hostHeader = req.headers.host;
    if (hostHeader !== undefined && !validHostValue(hostHeader)) return sendError(res, 400, undefined, true);
    // A transfer coding we do not implement (RFC 9112 6.1): llhttp decodes only the final chunked
    // and would hand the origin the still-coded bytes as the body. Chunked not last is its 400.
    if (head.coding === 2) return sendError(res, 501, undefined, true);
    // Content in a GET or HEAD has no defined semantics (RFC 9110 9.3.1/9.3.2): forwarded, it
    // would make a cached answer depend on bytes the cache key ignores; dropped, the client's
    // request would silently change. Refused, and the connection closed so the unread body is
    // never taken for a request (RFC 9110 9.3.1 names that smuggling risk).
    if ((req.method === 'GET' || req.method === 'HEAD') && carriesContent(req, head.coding)) return sendError(res, 400, undefined, true);
    if (req.method === 'CONNECT') return sendError(res, 405, { allow: ALLOW });
    const target = parseTarget(rawUrl, hostHeader);
    if (target === 'bad-target') return sendError(res, 400, undefined, true);
    // HTTP/1.1 requires a Host (node answers 400 itself); HTTP/1.0 may omit it and then only the
    // default host can serve it.
    const localAddress = port === undefined ? undefined : req.socket.localAddress;
    let host = state.table.route(target.host, port, localAddress);
    if (host?.facade !== undefined) host = host.facade;
    tx.host = host;
    if (host !== undefined && tx.sessionRow === 0) tx.sessionRow = workerCounters.routed(host.counterSlot);
    tx.url = target.url;
    // The URL and header limits are the routed host's own (functions inside a host override the
    // global ones); with no host, the global ones.
    const limits = host === undefined ? state.limits : hostLimits(host);
    if (rawUrl.length > limits.maxUrlLength) return sendError(res, 414, undefined, true);
    if (headBytes > limits.maxHeaderSize) return sendError(res, 431, undefined, true);
    if (fieldCount > limits.maxHeaderCount) return sendError(res, 431, undefined, true);
    if (host === undefined) return sendError(res, 404);
    if (state.traceKeyword !== undefined) startTrace(tx, state.traceKeyword);

    // Only the internal port (no `port`) trusts the sibling's marks.
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

    if (target.url === '*') {
      // OPTIONS * asks about the server in general (RFC 9110 9.3.7): that is us, not an origin.
      if (req.method === 'OPTIONS') {
        tx.status = 200;
        res.writeHead(200, { allow: ALLOW, 'content-length': '0' });
        res.end();
        return;
      }
      return sendError(res, 400, undefined, true);
    }
    tx.ruleHost = target.host;
    serveRouted(tx as Transaction, state, port, localAddress);
  };
}

/** A host by name as receive routes it (a facade serves as the host it names). */
function router(state: RuntimeState, port: number | undefined, localAddress: string | undefined): Router {
  return (name) => {
    const h = state.table.route(name, port, localAddress);
    return h?.facade ?? h;
  };
}

/**
 * The routed transaction through the rule stages (urlRewrites, access control, then the network
 * rules: front header edits, bypass) into the cache stages. A fallback comes back here with its
 * new URL (tx.reroute), so the rules see it as they see a request. A host without rules pays
 * one property test per kind.
 */
function serveRouted(tx: Transaction, state: RuntimeState, port: number | undefined, localAddress: string | undefined): void {
  const res = tx.res;
  // Whether the routed host's hook selects the request, once known (a host without a hook
  // allocates nothing for it: the closures below exist only for hosts with one).
  let hooked: boolean | undefined;
  // A sibling's hand-off went through them already (its URL is the rewritten one), unless a
  // fallback here routed it anew.
  if (tx.host.rules !== undefined && (!tx.fromSibling || tx.fallback !== undefined)) {
    const served = applyRewrites(tx, tx.host, router(state, port, localAddress));
    if (served === ROUTING_LOOP) return sendError(res, 508, undefined, false, ROUTING_LOOP_TEXT);
    // A rewrite to a host nobody serves: a 404 of no host, as for a request that named it.
    (tx as TransactionRecord).host = served;
    if (served === undefined) return sendError(res, 404);
    const access = served.rules?.access;
    if (access !== undefined) {
      // skipIfMatched.accessControl false: a denied request is still shown to the hook, whose own
      // answer wins; when it says continue, the denial stands.
      const hook = served.hook;
      const defer = hook !== undefined && !hook.skipAccess && (hooked = hookSelects(tx, hook));
      if (checkAccess(tx, access, defer)) {
        if (defer && tx.access === 2 && !res.headersSent) callHook(tx, hook!, router(state, port, localAddress), () => sendDenied(tx));
        return;
      }
    }
  }
  // A pagedesk command is answered there, or goes on as a request for the edit URL (before the
  // network rules: a bypassed edit is still an edit, only not cached). A fallback's new URL is
  // looked at anew.
  if (tx.pagedesk !== undefined) tx.pagedesk = undefined;
  if (tx.host.pagedesk !== undefined && servePagedesk(tx, tx.host.pagedesk)) return;
  // A sibling's hand-off had the network rules applied by the worker its client talked to; the
  // front edits of a request apply once, on its first pass.
  const net = tx.host.net;
  if (net !== undefined && !tx.fromSibling) {
    if (net.frontModify !== undefined && tx.fallback === undefined) modifyFront(tx, net.frontModify);
    const hook = tx.host.hook;
    const before = hook === undefined || hook.skipBypass ? undefined : (go: () => void): void => {
      if (hooked ??= hookSelects(tx, hook)) callHook(tx, hook, router(state, port, localAddress), go);
      else go();
    };
    if ((net.bypass !== undefined || net.bypassNoCache) && bypass(tx, net, before)) return;
  }
  if (tx.host.fallbacks !== undefined && tx.reroute === undefined) {
    tx.reroute = (name) => {
      if (name !== undefined) {
        const h = router(state, port, localAddress)(name);
        if (h === undefined) return sendError(res, 404);
        tx.host = h;
      }
      serveRouted(tx, state, port, localAddress);
    };
  }
  // In hash balance the cache stage serves hits itself and hands misses to the URL's owner.
  const hook = tx.host.hook;
  // A sibling's hand-off behind the hook carries the redefinition (tx.hook): not hooked again.
  if (hook !== undefined && tx.hook === undefined && (hooked ??= hookSelects(tx, hook))) callHook(tx, hook, router(state, port, localAddress), () => state.serve(tx));
  else state.serve(tx);
}

