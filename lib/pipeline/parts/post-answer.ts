// A POST's answer kept as its target's GET representation (RFC 9110 9.3.3, RFC 9111 4): when the
// origin gives it explicit freshness and a Content-Location naming the POST's own URI, the body
// is written to the store while it streams to the client, under the key a GET of that URI looks
// up. The POST still passes through as every unsafe method does (lookup.ts passUnsafe): its
// success invalidates the URI first, and this copy is what a later GET then finds.
import { Transform, type Readable } from 'node:stream';
import { postAnswerReusable, type HeaderMap } from '../../cache/policy/index.js';
import type { CacheContext } from './context.js';
import { newEntryMeta } from './entry-meta.js';
import { endToEndResponseHeaders } from './hop-by-hop.js';
import { modifyOriginResponse } from './header-edits.js';
import type { Transaction } from './transaction.js';
import { noteOf } from './cache-status.js';

/** What the pass-through does with the origin body: the same bytes, also stored. */
export type BodyTee = (body: Readable) => Readable;

/**
 * The tee that stores the POST's answer, or undefined when it is not reusable. `after`: when the
 * invalidation of the URI was recorded; the copy counts as received after it (the index lands a
 * copy received before an invalidation of its URL stale, IndexDb.insertRow).
 */
export function postAnswerTee(ctx: CacheContext, tx: Transaction, status: number,
  raw: Record<string, string | string[] | undefined>, after: number): BodyTee | undefined {
  if (tx.req.method !== 'POST' || tx.postBody !== undefined) return undefined;
  // The fields as they would be stored from a GET's answer: end-to-end, the back edits made.
  const headers = endToEndResponseHeaders(raw);
  if (tx.host.net?.backModify !== undefined) modifyOriginResponse(tx, headers);
  const reqHeaders = tx.req.headers as HeaderMap;
  if (!postAnswerReusable(tx.url, tx.req.headers.host ?? tx.host.name, reqHeaders, status, headers, tx.host.cachePolicy)) return undefined;
  const url = tx.host.net?.key === undefined ? tx.url : tx.host.net.key.url(tx.url);
  const at = Math.max(Date.now(), after + 1);
  const meta = newEntryMeta({ vhost: tx.host.name, url }, status, headers, tx.req.headers, at, at, tx.host, undefined);
  noteOf(tx).stored = true;
  return (body) => {
    const sink = ctx.store.openSink(meta);
    let ended = false;
    const tee = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        if (sink.write(chunk)) cb(null, chunk);
        else sink.onDrain(() => cb(null, chunk));
      },
      flush(cb) {
        ended = true;
        sink.end(() => undefined);
        cb();
      },
    });
    // A body that breaks, or a client that leaves (pipeBody destroys the source, this tee):
    // nothing is kept, and the origin body is given up as it would be without the tee.
    tee.once('close', () => {
      if (ended) return;
      sink.abort();
      if (!body.destroyed) body.destroy();
    });
    body.once('error', (err) => tee.destroy(err));
    return body.pipe(tee);
  };
}
