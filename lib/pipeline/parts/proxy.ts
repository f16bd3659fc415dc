// Stage "fetch" + "deliver" for traffic that passes through: the request goes to the host's
// origin with its body streamed, and the answer streams back as it arrives. Back-pressure holds
// both ways: undici reads the client body only as fast as the origin takes it, and pipeBody()
// pauses the origin body while the client socket is full.
import { takeTags } from '../../cache/tags.js';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeBody } from './pipe-body.js';
import { h2HasBody, isH2 } from './h2.js';
import type { OriginResponse } from '../../origin/index.js';
import { originNote } from '../../log/host-logs.js';
import { MAX_STATUS, OriginError, OriginTrace, statusError, traceAnswered, traceFailed } from '../../origin/index.js';
import { endToEndRequestHeaders, endToEndResponseHeaders, VIA } from './hop-by-hop.js';
import { sendError } from './respond.js';
import { CTX_HEADER, HOOKED_HEADER, SIBLING_HEADER } from './sibling-header.js';
import type { Transaction } from './transaction.js';
import { Upload, type TakenBody } from './upload.js';
import { modifyOriginRequest, modifyOriginResponse } from './header-edits.js';
import { fallBack } from './fallback.js';
import { forwardInterim } from './interim.js';
import { TCP_ERROR, TCP_MISS } from '../../cache/policy/results.js';

/** Opt-in (SVC_DEBUG_HEADERS=1): name the worker on origin requests and answers, for tracing. */
const DEBUG_WORKER = process.env.SVC_DEBUG_HEADERS === '1' ? String(process.env.SVC_WORKER_INDEX ?? '0') : undefined;

/**
 * True when the client message carries a body (RFC 9112 6.3: Transfer-Encoding or Content-Length;
 * HTTP/2: DATA frames follow, the stream did not end with its head, with or without a length).
 */
export function hasRequestBody(req: IncomingMessage): boolean {
  if (req.httpVersionMajor === 2 && isH2(req)) return h2HasBody(req);
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const cl = req.headers['content-length'];
  return cl !== undefined && cl !== '0';
}

/**
 * The client's address for X-Forwarded-For: a dual-stack (`*`) socket reports IPv4 clients as
 * `::ffff:a.b.c.d`, which is the same client as `a.b.c.d` and is logged and matched as such.
 */
export function clientAddress(req: IncomingMessage): string {
  const a = req.socket.remoteAddress;
  if (a === undefined) return '';
  return a.startsWith('::ffff:') && a.includes('.', 7) ? a.slice(7) : a;
}

/** Request fields for the origin: end-to-end fields, X-Forwarded-For appended, Via added. */
export function originRequestHeaders(tx: Transaction): Record<string, string | string[]> {
  const req = tx.req;
  const headers = endToEndRequestHeaders(req.headers);
  delete headers[SIBLING_HEADER];
  delete headers[CTX_HEADER];
  delete headers[HOOKED_HEADER];
  if (tx.hook !== undefined) hookOriginHeaders(tx, headers);
  // An instant bypass goes as the client sent it: no fields of ours, no back-end edits.
  if (tx.bypass === 2) return headers;
  if (tx.host.forwardedFor && !tx.fromSibling) {
    const prior = headers['x-forwarded-for'];
    const client = clientAddress(req);
    headers['x-forwarded-for'] = prior === undefined ? client : `${Array.isArray(prior) ? prior.join(', ') : prior}, ${client}`;
  }
  const via = headers.via;
  headers.via = via === undefined ? VIA : `${Array.isArray(via) ? via.join(', ') : via}, ${VIA}`;
  if (DEBUG_WORKER !== undefined) headers['x-svc-worker'] = DEBUG_WORKER;
  if (tx.host.net?.backModify !== undefined) modifyOriginRequest(tx, headers);
  return headers;
}

/**
 * The hook's originRequest: its body replaces the client's (the client framing goes; undici
 * frames the new one), and its headers join the client's without replacing one, except under
 * instant bypass, where they win (document 2). Host never: walk.ts sets it.
 */
function hookOriginHeaders(tx: Transaction, headers: Record<string, string | string[]>): void {
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  const o = tx.hook!.originRequest;
  if (o === undefined) return;
  for (const f of o.headers) if (headers[f.key] === undefined || tx.bypass === 2) headers[f.key] = f.value;
}

/** Writes an upstream answer to the client, streaming the body; returns when it is handed over. */
export interface Upstream {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

export function deliverUpstream(tx: Transaction, upstream: Upstream, addVia = true): void {
  const res = tx.res;
  const headers = endToEndResponseHeaders(upstream.headers);
  // A sibling's answer (addVia false) had the origin-side edits made by the owner worker.
  if (addVia && tx.host.net?.backModify !== undefined) modifyOriginResponse(tx, headers);
  if (addVia) takeTags(headers, tx.host.tags);
  if (addVia && tx.bypass !== 2) {
    const via = headers.via;
    headers.via = via === undefined ? VIA : `${Array.isArray(via) ? via.join(', ') : via}, ${VIA}`;
  }
  if (DEBUG_WORKER !== undefined && addVia) headers['x-svc-worker'] = DEBUG_WORKER;
  // A HEAD that missed is passed to the origin as it is (lookup.ts) but says so, as a GET does.
  if (tx.req.method === 'HEAD' && tx.cacheResult !== undefined) headers['x-cache'] = tx.cacheResult;
  pipeBody(upstream.body, res, (err) => { if (err) bodyBroke(tx); }, () => {
    tx.status = upstream.statusCode;
    res.writeHead(upstream.statusCode, headers);
  });
}

/**
 * An upstream body broke (or the client left). Once the status line is out an incomplete body is
 * the only signal left; before it (the head waits for the first body byte) the origin's answer
 * failed as a whole: 502.
 */
export function bodyBroke(tx: Transaction): void {
  const res = tx.res;
  if (res.headersSent || res.destroyed) {
    tx.aborted = true;
    if (!res.destroyed) res.destroy();
    return;
  }
  tx.cacheResult = TCP_ERROR;
  tx.status = 502;
  sendError(res, 502, undefined, !tx.req.complete);
}

/**
 * Drops a body nobody will read. undici emits 'error' on a destroyed body; without a listener
 * that would bring the whole worker down.
 */
export function discard(body: Readable): void {
  body.on('error', noop);
  body.destroy();
}
function noop(): void { /* an error of a body we abandoned or will inspect later: nothing to do now */ }

function originErrorStatus(err: unknown): number {
  return err instanceof OriginError ? err.status : 502;
}

/** May give a tee the answer's body goes through on its way to the client (a POST answer stored). */
type BeforeAnswer = (status: number, headers: Record<string, string | string[] | undefined>) => Promise<((body: Readable) => Readable) | undefined>;

/**
 * Pass-through proxying of one transaction to the host's origin. `beforeAnswer` runs when the
 * origin's status is known and before the client sees it (invalidation after unsafe methods).
 * A request body is taken in first (upload.ts): the origin connection is taken only once the
 * request is ready to use it.
 */
export function proxyToOrigin(tx: Transaction, beforeAnswer?: BeforeAnswer): void {
  // A cached POST's body was read already (post-cache.ts): an unshared fetch sends it again.
  if (tx.postBody !== undefined) { sendToOrigin(tx, tx.postBody, null, beforeAnswer); return; }
  // A hooked request's body was read for the hook; what goes on is the hook's (postBody or none).
  if (tx.hook !== undefined || !hasRequestBody(tx.req)) { sendToOrigin(tx, null, null, beforeAnswer); return; }
  const upload = new Upload(tx, tx.host.upload);
  upload.take().then((body) => { if (body !== undefined) sendToOrigin(tx, body, upload, beforeAnswer); }, noop);
}

/**
 * The origin request with a body already taken in (`upload` watches the rest of a streamed one);
 * also the local fallback of a failed hand-off, which took the body in itself.
 */
export function sendToOrigin(tx: Transaction, body: TakenBody | null, upload: Upload | null, beforeAnswer?: BeforeAnswer): void {
  const controller = new AbortController();
  const onClose = (): void => { if (!tx.res.writableFinished) controller.abort(); };
  tx.res.once('close', onClose);
  // A client too slow with the rest of a streamed body gets 408 (Upload); its origin request goes.
  if (upload !== null) upload.onStall = () => controller.abort();
  const trace = tx.origin = new OriginTrace(tx.host.counterSlot);
  // Hooked: GET, or POST with the body the hook stage chose (a client HEAD goes as GET).
  const method = tx.hook === undefined ? tx.req.method! : tx.postBody === undefined ? 'GET' : 'POST';
  const headers = originRequestHeaders(tx);
  if (tx.host.logs !== undefined) trace.note = originNote(tx, method, true, headers);
  const failed = (err: unknown): void => {
    traceFailed(trace, err);
    if (controller.signal.aborted) return;
    const status = originErrorStatus(err);
    if (beforeAnswer === undefined && tx.host.fallbacks !== undefined && fallBack(tx, -1, status, {}, true)) return;
    tx.cacheResult = TCP_ERROR;
    tx.status = status;
    // An upload cut short leaves the rest of its body unread (the socket stops reading once the
    // request's buffer is full): the connection goes with the answer, or it would hang there.
    sendError(tx.res, tx.status, undefined, !tx.req.complete);
  };
  (tx.pagedesk ?? tx.host.origin).request({
    method,
    url: tx.url,
    headers,
    body,
    signal: controller.signal,
    trace,
    onInformational: (status, fields) => forwardInterim(tx, status, fields),
  }).then((upstream: OriginResponse) => {
    // No HTTP status: the origin failed, as if it had not answered (traced before the body is
    // given up: giving it up aborts the exchange, which would trace a Client-Close).
    if (upstream.statusCode > MAX_STATUS) { failed(statusError(upstream.statusCode)); discard(upstream.body); return; }
    traceAnswered(trace, upstream.statusCode);
    if (beforeAnswer === undefined) {
      if (tx.host.fallbacks !== undefined && fallBack(tx, upstream.statusCode, upstream.statusCode, upstream.headers, true)) { discard(upstream.body); return; }
      tx.cacheResult ??= TCP_MISS;
      deliverUpstream(tx, upstream);
      return;
    }
    tx.cacheResult ??= TCP_MISS;
    // The body waits unread while the invalidation runs; an origin reset meanwhile must not be an
    // unheard 'error' (pipeBody sees the broken body when it gets it).
    upstream.body.on('error', noop);
    beforeAnswer(upstream.statusCode, upstream.headers).catch(() => undefined)
      .then((tee) => deliverUpstream(tx, tee === undefined ? upstream : { ...upstream, body: tee(upstream.body) }));
  }, failed);
}
