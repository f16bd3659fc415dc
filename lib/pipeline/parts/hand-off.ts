// Hash balance: a request whose URL another worker owns is handed to that worker's internal
// loopback port over a keep-alive pool, so the node fetches and stores each object once.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { BodyTap } from '../../origin/body.js';
import { classify, Failure } from '../../origin/errors.js';
import { endToEndRequestHeaders } from './hop-by-hop.js';
import { forwardInterim } from './interim.js';
import { clientAddress, deliverUpstream, hasRequestBody, sendToOrigin } from './proxy.js';
import { sendError } from './respond.js';
import type { Transaction } from './transaction.js';
import { Upload, type TakenBody } from './upload.js';

import { CTX_HEADER, HOOKED_HEADER, SIBLING_HEADER } from './sibling-header.js';
import { hookedValue } from './hook-hand-off.js';
import { isCacheResult, TCP_ERROR, TCP_NONE } from '../../cache/policy/results.js';
import { noteOf } from './cache-status.js';

export { SIBLING_HEADER };

/**
 * Whether a failed hand-off may be served here instead: nothing of the request body went out,
 * and the owner cannot have acted on it (the connection never opened), or the method is safe to
 * repeat (the owner may have died mid-request).
 */
function mayServeLocally(err: unknown, method: string, bodySent: boolean): boolean {
  if (bodySent) return false;
  const kind = classify(err);
  if (kind === Failure.Connect || kind === Failure.ConnectTimeout || kind === Failure.PoolClosed) return true;
  return kind === Failure.Reset && (method === 'GET' || method === 'HEAD' || method === 'OPTIONS');
}

/** Longest an owner may stay silent (no head, or no body bytes) before the hand-off fails (502). */
const SIBLING_STALL_MS = 120_000;

export class Siblings {
  private readonly pools = new Map<number, Pool>();
  private readonly mark: string;
  private readonly secret: Buffer;

  /**
   * `secret`: made by the primary for this start (SIBLING_SECRET_ENV). Any local process can
   * connect to the loopback sibling ports; only our workers know it. Without one (a worker not
   * started by our primary) nothing is trusted.
   */
  constructor(private readonly basePort: number, selfIndex: number, secret: string) {
    this.mark = `${selfIndex}:${secret}`;
    this.secret = Buffer.from(secret);
  }

  /** Whether a request on this worker's sibling port comes from one of our workers. */
  trusts(req: IncomingMessage): boolean {
    const mark = req.headers[SIBLING_HEADER];
    if (typeof mark !== 'string' || this.secret.length === 0) return false;
    const given = Buffer.from(mark.slice(mark.indexOf(':') + 1));
    return given.length === this.secret.length && timingSafeEqual(given, this.secret);
  }

  private pool(index: number): Pool {
    let p = this.pools.get(index);
    if (p === undefined) {
      // The owner applies the origin timeouts itself and answers 504 when they expire; these
      // bounds only keep a hung owner (stopped, not dead) from holding the client for ever.
      p = new Pool(`http://127.0.0.1:${this.basePort + index}`, {
        connections: 64, keepAliveTimeout: 60_000, headersTimeout: SIBLING_STALL_MS, bodyTimeout: SIBLING_STALL_MS, pipelining: 1,
      });
      this.pools.set(index, p);
    }
    return p;
  }

  forward(tx: Transaction, owner: number): void {
    if (!hasRequestBody(tx.req)) { this.send(tx, owner, null, null); return; }
    // As for the origin (upload.ts): the owner's connection is taken once the request is ready.
    const upload = new Upload(tx, tx.host.upload);
    upload.take().then((body) => { if (body !== undefined) this.send(tx, owner, body, upload); }, () => undefined);
  }

  private send(tx: Transaction, owner: number, body: TakenBody | null, upload: Upload | null): void {
    const req = tx.req;
    const headers = endToEndRequestHeaders(req.headers);
    // The routed host's name, not the client's Host: an absolute-form request carries its host in
    // the target, and the owner must land on the same virtual host this worker chose (a facade's
    // name for a facade: the owner serves it through the same named host and counts it there).
    headers.host = tx.host.logName;
    if (tx.host.forwardedFor) {
      const client = clientAddress(req);
      const prior = headers['x-forwarded-for'];
      headers['x-forwarded-for'] = prior === undefined ? client : `${Array.isArray(prior) ? prior.join(', ') : prior}, ${client}`;
    }
    headers[SIBLING_HEADER] = this.mark;
    // One request chain: the owner's record carries this transaction's x-ctx-id.
    headers[CTX_HEADER] = tx.ctxId;
    // Behind the hook: the owner goes on with this redefinition instead of calling the hook.
    // A client's own field of that name would be trusted by the owner: never passed on.
    if (tx.hook !== undefined) headers[HOOKED_HEADER] = hookedValue(tx.hook);
    else delete headers[HOOKED_HEADER];
    tx.handedTo = owner;
    const controller = new AbortController();
    const onClose = (): void => { if (!tx.res.writableFinished) controller.abort(); };
    tx.res.once('close', onClose);
    if (upload !== null) upload.onStall = () => controller.abort();
    // A tap (as for origin failover) tells whether any byte of a streamed body left, and leaves
    // the client's stream intact for a local retry when none did; a buffered body can always go again.
    const tap = body === null || Buffer.isBuffer(body) ? null : new BodyTap(body);
    this.pool(owner).request({
      method: req.method as 'GET',
      path: tx.url,
      headers,
      body: tap ?? body,
      signal: controller.signal,
      // The owner passes the origin's interim answers on; so does this worker, to its client.
      onInfo: ({ statusCode, headers: fields }) => forwardInterim(tx, statusCode, fields as Record<string, string | string[]>),
    }).then((upstream) => {
      // The owner did the cache work: its result (sent as x-cache) is this transaction's result.
      const ownerResult = upstream.headers['x-cache'];
      tx.cacheResult ??= typeof ownerResult === 'string' && isCacheResult(ownerResult) ? ownerResult : TCP_NONE;
      // The owner wrote this cache's Cache-Status member.
      noteOf(tx).relayed = true;
      deliverUpstream(tx, { statusCode: upstream.statusCode, headers: upstream.headers, body: upstream.body }, false);
    }, (err: unknown) => {
      if (controller.signal.aborted) return;
      // The owner is gone (restarting, before the primary's new ring arrives): fetch it here
      // rather than fail the client. Pass-through: the object is not stored by a non-owner.
      if (mayServeLocally(err, req.method ?? 'GET', tap !== null && tap.consumed)) {
        tx.res.off('close', onClose);
        tx.handedTo = -1;
        sendToOrigin(tx, body, upload);
        return;
      }
      tx.cacheResult = TCP_ERROR;
      tx.status = 502;
      sendError(tx.res, 502, undefined, !req.complete); // see sendToOrigin
    });
  }

  /**
   * A GET of `path` on virtual host `host` from worker `index`'s cache (a pagedesk source): as
   * a hand-off, but for this worker's own use, answered as it comes.
   */
  fetch(index: number, host: string, path: string, headers: Record<string, string | string[]>, signal: AbortSignal | undefined):
    Promise<{ statusCode: number; headers: Record<string, string | string[]>; body: Readable }> {
    return this.pool(index).request({ method: 'GET', path, headers: { ...headers, host, [SIBLING_HEADER]: this.mark }, signal })
      .then((r) => ({ statusCode: r.statusCode, headers: r.headers as Record<string, string | string[]>, body: r.body }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}
