// The worker's request entry: bounds checks, target form, virtual host (stage "receive"),
// the hash-balance hand-off, then the serving stages.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HashRing } from '../cluster/ring.js';
import type { HashKeyFunction } from '../cluster/hash-key.js';
import type { HostRuntime } from './host-runtime.js';
import { sendError } from './respond.js';
import { SIBLING_HEADER, type Siblings } from './siblings.js';
import { parseTarget } from './target.js';
import type { Transaction } from './transaction.js';
import type { VhostTable } from './vhost-table.js';

const ALLOW = 'GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS';

export interface Limits { maxUrlLength: number; maxHeaderSize: number }

export interface Balance {
  mode: 'rr' | 'hash';
  ring: HashRing;
  hashKey: HashKeyFunction;
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

function headerBytes(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i++) n += raw[i]!.length + 2;
  return n;
}

export function createHandler(getState: () => RuntimeState, onTransaction?: (tx: Transaction) => void) {
  return function handle(req: IncomingMessage, res: ServerResponse, port: number | undefined): void {
    const state = getState();
    const rawUrl = req.url ?? '';
    if (rawUrl.length > state.limits.maxUrlLength) return sendError(res, 414, undefined, true);
    if (headerBytes(req.rawHeaders) > state.limits.maxHeaderSize) return sendError(res, 431, undefined, true);
    if (req.method === 'CONNECT') return sendError(res, 405, { allow: ALLOW });
    const target = parseTarget(rawUrl, req.headers.host);
    if (target === 'bad-target') return sendError(res, 400, undefined, true);
    // HTTP/1.1 requires a Host (node answers 400 itself); HTTP/1.0 may omit it and then only the
    // default host can serve it.
    const host = state.table.route(target.host, port);
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

