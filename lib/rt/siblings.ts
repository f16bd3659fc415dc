// Hash balance: a request whose URL another worker owns is handed to that worker's internal
// loopback port over a keep-alive pool, so the node fetches and stores each object once.
import { Pool } from 'undici';
import { endToEndRequestHeaders } from './hop-by-hop.js';
import { deliverUpstream, hasRequestBody } from './proxy.js';
import { sendError } from './respond.js';
import type { Transaction } from './transaction.js';

import { SIBLING_HEADER } from './sibling-header.js';

export { SIBLING_HEADER };

export class Siblings {
  private readonly pools = new Map<number, Pool>();

  constructor(private readonly basePort: number, private readonly selfIndex: number) {}

  private pool(index: number): Pool {
    let p = this.pools.get(index);
    if (p === undefined) {
      p = new Pool(`http://127.0.0.1:${this.basePort + index}`, {
        connections: 64, keepAliveTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0, pipelining: 1,
      });
      this.pools.set(index, p);
    }
    return p;
  }

  forward(tx: Transaction, owner: number): void {
    const req = tx.req;
    const headers = endToEndRequestHeaders(req.headers);
    headers.host = req.headers.host ?? tx.host.name;
    const client = req.socket.remoteAddress ?? '';
    if (tx.host.forwardedFor) {
      const prior = headers['x-forwarded-for'];
      headers['x-forwarded-for'] = prior === undefined ? client : `${Array.isArray(prior) ? prior.join(', ') : prior}, ${client}`;
    }
    headers[SIBLING_HEADER] = String(this.selfIndex);
    const controller = new AbortController();
    tx.res.once('close', () => { if (!tx.res.writableFinished) controller.abort(); });
    this.pool(owner).request({
      method: req.method as 'GET',
      path: tx.url,
      headers,
      body: hasRequestBody(req) ? req : null,
      signal: controller.signal,
    }).then((upstream) => {
      tx.cacheResult ??= 'TCP_NONE';
      deliverUpstream(tx, { statusCode: upstream.statusCode, headers: upstream.headers, body: upstream.body }, false);
    }, () => {
      if (controller.signal.aborted) return;
      // The owner is gone (restarting): serve it here rather than fail the client.
      tx.status = 502;
      sendError(tx.res, 502);
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}
