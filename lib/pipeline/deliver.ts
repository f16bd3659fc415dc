// Step "deliver" for stored objects: status and fields with Age, 304 for a client conditional
// that matches, 412, 206 single or multipart ranges, 416, HEAD, and the body from memory (one
// buffer) or from its file; in the client's content coding when the host compresses (encode.ts).
import type { ServerResponse } from 'node:http';
import { pipeBody } from './parts/pipe-body.js';
import type { CachedObject } from '../cache/store.js';
import type { Transaction } from './parts/transaction.js';
import {
  evaluateRange, multipartBoundary, multipartContentType, multipartLength, multipartParts, multipartTrailer, type ByteRange, type HeaderMap,
} from '../cache/policy/index.js';
import { conditionalResult } from './parts/rules.js';
import { ageAt, answerHeaders, DEBUG_WORKER, fullAnswerHead, NOT_MODIFIED_FIELDS, viaWith, viewOf } from './parts/stored-view.js';
import { fallBack } from './parts/fallback.js';
import { TCP_HIT, TCP_IMS_HIT } from '../cache/policy/results.js';
import { ttlSeconds } from '../cache/policy/cache-status.js';
import { hitCacheStatus, noteOf } from './parts/cache-status.js';
import { deliverNegotiated } from './parts/encode.js';
import { writePreparedHead } from './parts/prepared-head.js';
import { DONE } from './parts/runtime-state.js';
import { cacheOf } from './parts/context.js';

/**
 * Step "deliver": answers from the stored copy lookup found (or a refresh freshened, or the
 * origin's failure left to serve: tx.stored), the last step before finish. Hot path: a memory
 * hit comes here from lookup through the driver with nothing allocated for the way.
 */
export function deliverStep(tx: Transaction): typeof DONE {
  const obj = tx.stored!;
  tx.stored = undefined;
  deliverNegotiated(cacheOf(tx).store, tx, obj, tx.storedNow, tx.storedDrop, deliverCached);
  return DONE;
}

/** Fields of an answer the cache generates from a stored object (304, 412, 416). */
function generatedHeaders(obj: CachedObject, now: number, tx: Transaction, extra: Record<string, string>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = extra;
  out.age = String(ageAt(viewOf(obj), obj, now));
  out.via = viaWith(obj.headers.via);
  out['x-cache'] = tx.cacheResult ?? TCP_HIT;
  if (DEBUG_WORKER !== undefined) out['x-svc-worker'] = DEBUG_WORKER;
  return out;
}

function sendBody(res: ServerResponse, obj: CachedObject, start: number, end: number, tx: Transaction): void {
  if (obj.body !== undefined) {
    res.end(start === 0 && end === obj.body.length - 1 ? obj.body : obj.body.subarray(start, end + 1));
    return;
  }
  pipeBody(obj.openBody(start, end), res, (err) => {
    if (err) { tx.aborted = true; if (!res.destroyed) res.destroy(); }
  });
}

/**
 * The Cache-Status ttl of an answer made from fields (writeHead adds the member from the note);
 * a full hit passes its ttl to hitCacheStatus instead and notes nothing (no note object per hit).
 */
function noteTtl(tx: Transaction, ttl: number): void {
  if (tx.host.cacheStatus !== undefined) noteOf(tx).ttl = ttl;
}

function finishEmpty(tx: Transaction, status: number, headers: Record<string, string | string[]>): void {
  tx.status = status;
  tx.res.writeHead(status, headers);
  tx.res.end();
}

/** Answers a transaction from a stored object; `drop` names fields a no-cache="..." forbids. */
function deliverCached(tx: Transaction, obj: CachedObject, now: number, drop?: readonly string[]): void {
  // The frontend fallbacks see cached answers too (a negatively cached 404 ...).
  if (tx.host.fallbacks !== undefined && fallBack(tx, obj.status, obj.status, obj.headers, false)) return;
  const req = tx.req;
  const headers = obj.headers;
  const ttl = ttlSeconds(obj.staleAt, now);
  const cond = conditionalResult(req.method!, req.headers, obj.status, headers);
  if (cond === 304) {
    noteTtl(tx, ttl);
    tx.cacheResult = tx.cacheResult === TCP_HIT || tx.cacheResult === undefined ? TCP_IMS_HIT : tx.cacheResult;
    const out = generatedHeaders(obj, now, tx, {});
    for (const f of NOT_MODIFIED_FIELDS) { const v = headers[f]; if (v !== undefined) out[f] = v; }
    return finishEmpty(tx, 304, out);
  }
  if (cond === 412) { noteTtl(tx, ttl); return finishEmpty(tx, 412, generatedHeaders(obj, now, tx, { 'content-length': '0' })); }
  const size = obj.size;
  const range = req.headers.range === undefined ? undefined : evaluateRange(req.method!, req.headers as HeaderMap, { status: obj.status, headers }, size);
  if (range?.type === 'unsatisfiable') {
    noteTtl(tx, ttl);
    return finishEmpty(tx, 416, generatedHeaders(obj, now, tx, { 'content-range': range.contentRange, 'content-length': '0' }));
  }
  const head = req.method === 'HEAD';
  if ((range === undefined || range.type === 'none') && drop === undefined) {
    // The common answer: every field prepared with the stored object.
    const view = viewOf(obj);
    tx.status = obj.status;
    const cs = hitCacheStatus(tx, view, ttl);
    const fields = fullAnswerHead(view, ageAt(view, obj, now), tx.cacheResult ?? 'TCP_MISS', cs);
    if (!writePreparedHead(tx.res, obj.status, view, fields, size)) tx.res.writeHead(obj.status, fields);
    if (head || size === 0) { tx.res.end(); return; }
    sendBody(tx.res, obj, 0, size - 1, tx);
    return;
  }
  noteTtl(tx, ttl);
  const out = answerHeaders(obj, headers, now, tx, drop);
  if (range?.type === 'single') {
    const r = range.range;
    out['content-range'] = range.contentRange;
    out['content-length'] = String(r.end - r.start + 1);
    tx.status = 206;
    tx.res.writeHead(206, out);
    if (head) { tx.res.end(); return; }
    sendBody(tx.res, obj, r.start, r.end, tx);
    return;
  }
  if (range?.type === 'multi') { void deliverMultipart(tx, obj, out, range.ranges, head); return; }
  // Without the fields no-cache="..." names. RFC 9110 8.6: no Content-Length in a 204 (nor a 304).
  if (obj.status !== 204) out['content-length'] = String(size);
  else delete out['content-length'];
  tx.status = obj.status;
  tx.res.writeHead(obj.status, out);
  if (head || size === 0) { tx.res.end(); return; }
  sendBody(tx.res, obj, 0, size - 1, tx);
}

async function deliverMultipart(tx: Transaction, obj: CachedObject, out: Record<string, string | string[]>, ranges: ByteRange[], head: boolean): Promise<void> {
  const res = tx.res;
  const boundary = multipartBoundary();
  const type = out['content-type'] === undefined ? undefined : String(out['content-type']);
  out['content-type'] = multipartContentType(boundary);
  out['content-length'] = String(multipartLength(ranges, obj.size, type, boundary));
  tx.status = 206;
  res.writeHead(206, out);
  if (head) { res.end(); return; }
  for (const part of multipartParts(ranges, obj.size, type, boundary)) {
    res.write(part.head);
    if (obj.body !== undefined) {
      res.write(obj.body.subarray(part.start, part.end + 1));
      continue;
    }
    try {
      for await (const chunk of obj.openBody(part.start, part.end)) {
        if (!res.write(chunk as Buffer)) await new Promise((ok) => res.once('drain', ok));
        if (res.destroyed) return;
      }
    } catch {
      tx.aborted = true;
      res.destroy();
      return;
    }
  }
  res.end(multipartTrailer(boundary));
}
