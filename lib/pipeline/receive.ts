// The worker's request entry: bounds checks, target form, virtual host (stage "receive"),
// the hash-balance hand-off, then the serving stages.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HashRing } from '../balance/ring.js';
import type { HashKeyFunction } from '../balance/hash-key.js';
import type { LuaHash } from '../balance/lua-hash.js';
import type { HostRuntime } from './host-runtime.js';
import { sendError } from './respond.js';
import { SIBLING_HEADER, type Siblings } from './hand-off.js';
import { parseTarget } from './target.js';
import type { Transaction } from './transaction.js';
import type { VhostTable } from '../routing/vhost-table.js';

const ALLOW = 'GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS';

export interface Limits { maxUrlLength: number; maxHeaderSize: number }

export interface Balance {
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
}

/** Size of the header section and how many Host fields it has, in one pass over rawHeaders. */
interface HeadShape { bytes: number; hosts: number }
const shape: HeadShape = { bytes: 0, hosts: 0 };

function measureHead(raw: string[]): HeadShape {
  let bytes = 0;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    bytes += name.length + raw[i + 1]!.length + 4;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  // One shared object: the handler reads it before anything else can run.
  shape.bytes = bytes;
  shape.hosts = hosts;
  return shape;
}

/**
 * Host = uri-host [ ":" port ] (RFC 9110 7.2, RFC 3986 3.2.2): an IP-literal in brackets or a
 * reg-name (unreserved, pct-encoded, sub-delims), then digits. Empty is allowed (RFC 9112 3.2).
 */
const HOST_VALUE = /^(?:\[[0-9A-Za-z:._~!$&'()*+,;=-]+\]|[0-9A-Za-z._~!$&'()*+,;=%-]*)(?::[0-9]*)?$/;

/** The last Host value found valid: a client sends the same one on every request. */
let lastValidHost = '';

export function validHostValue(value: string): boolean {
  if (value === lastValidHost) return true;
  if (!HOST_VALUE.test(value)) return false;
  lastValidHost = value;
  return true;
}

/** The client limits of a routed host (its functions over the global ones). */
function hostLimits(host: HostRuntime): Limits {
  return host.setting.functions.network.http.frontEnd;
}

export function createHandler(getState: () => RuntimeState, onTransaction?: (tx: Transaction) => void) {
  return function handle(req: IncomingMessage, res: ServerResponse, port: number | undefined): void {
    const state = getState();
    const rawUrl = req.url ?? '';
    const head = measureHead(req.rawHeaders);
    const headBytes = head.bytes;
    // RFC 9112 3.2: more than one Host, or an invalid one, is a 400 (node keeps the first silently,
    // and two parties reading different Hosts is a cache-poisoning vector).
    if (head.hosts > 1) return sendError(res, 400, undefined, true);
    const hostHeader = req.headers.host;
    if (hostHeader !== undefined && !validHostValue(hostHeader)) return sendError(res, 400, undefined, true);
    if (req.method === 'CONNECT') return sendError(res, 405, { allow: ALLOW });
    const target = parseTarget(rawUrl, hostHeader);
    if (target === 'bad-target') return sendError(res, 400, undefined, true);
    // HTTP/1.1 requires a Host (node answers 400 itself); HTTP/1.0 may omit it and then only the
    // default host can serve it.
    const host = state.table.route(target.host, port, port === undefined ? undefined : req.socket.localAddress);
    // The URL and header limits are the routed host's own (functions inside a host override the
    // global ones); with no host, the global ones.
    const limits = host === undefined ? state.limits : hostLimits(host);
    if (rawUrl.length > limits.maxUrlLength) return sendError(res, 414, undefined, true);
    if (headBytes > limits.maxHeaderSize) return sendError(res, 431, undefined, true);
    if (host === undefined) return sendError(res, 404);

    const fromSibling = port === undefined && req.headers[SIBLING_HEADER] !== undefined;
    const tx: Transaction = {
      req, res, host, url: target.url, fromSibling,
      startedAt: Date.now(), status: 0, cacheResult: undefined, aborted: false,
    };
    if (onTransaction !== undefined) res.once('finish', () => onTransaction(tx));

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
    // In hash balance the cache stage serves hits itself and hands misses to the URL's owner.
    state.serve(tx);
  };
}

