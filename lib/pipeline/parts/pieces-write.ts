// How an answer from spans and pieces goes out (pieces.ts): its head, computed from what the
// spans say of the object, and its bytes, written with back-pressure, a piece's as they arrive.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { StoredHeaders } from '../../cache/store.js';
import { ttlSeconds } from '../../cache/policy/cache-status.js';
import { noteOf } from './cache-status.js';
import { moreOf } from './piece-fetch.js';
import type { Known, Piece } from './pieces-known.js';
import { answerHeaders, NOT_MODIFIED_FIELDS } from './stored-view.js';
import type { Transaction } from './transaction.js';

export function writeHead(tx: Transaction, k: Known, status: number, start: number, end: number, fromCache: boolean, now: number): void {
  const fields: StoredHeaders = { ...k.headers };
  delete fields['content-range'];
  const out = answerHeaders(k.meta, fields, now, tx, undefined, fromCache);
  // Cache-Status ttl of an answer from stored spans: the newest span's.
  if (fromCache && tx.host.cacheStatus !== undefined) noteOf(tx).ttl = ttlSeconds(k.meta.staleAt, now);
  if (status === 304) {
    // Only the fields a 304 carries (deliver.ts), besides ours.
    for (const name of Object.keys(fields)) if (!NOT_MODIFIED_FIELDS.includes(name)) delete out[name];
  } else if (status === 412 || status === 416) {
    if (status === 416) out['content-range'] = `bytes */${k.total}`;
    out['content-length'] = '0';
  } else {
    out['content-length'] = String(end - start + 1);
    if (status === 206) out['content-range'] = `bytes ${start}-${end}/${k.total}`;
  }
  tx.status = status;
  tx.res.writeHead(status, out);
}

/** Bytes `from`..`to` (of the representation) of a piece, each stretch as soon as it arrived. */
export async function writeFromPiece(res: ServerResponse, piece: Piece, from: number, to: number): Promise<'done' | 'gone' | 'broken'> {
  let pos = from - piece.span.start;
  const stop = to - piece.span.start + 1;
  while (pos < stop) {
    if (piece.fill.got <= pos && !(await moreOf(piece, pos))) return 'broken';
    const upTo = Math.min(piece.fill.got, stop);
    if (!(await writeAll(res, piece.body.subarray(pos, upTo)))) return 'gone';
    pos = upTo;
  }
  return 'done';
}

/** Writes with back-pressure; false when the client went away. */
export async function writeAll(res: ServerResponse, bytes: Buffer | Readable): Promise<boolean> {
  const wait = (): Promise<void> => new Promise((ok) => {
    const done = (): void => { res.off('drain', done); res.off('close', done); ok(); };
    res.on('drain', done);
    res.on('close', done);
  });
  if (Buffer.isBuffer(bytes)) {
    if (!res.write(bytes)) await wait();
    return !res.destroyed;
  }
  try {
    for await (const chunk of bytes) {
      if (res.destroyed) { bytes.destroy(); return false; }
      if (!res.write(chunk as Buffer)) await wait();
    }
  } catch {
    throw new Error('stored span unreadable');
  }
  return !res.destroyed;
}
