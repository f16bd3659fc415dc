// Messages between a DiskStore (main thread) and its writer thread (workers/disk-writer-thread).
//
// main -> thread, at most one message per event-loop turn, and the ops of object writes in
//   batches of up to a few ms (writer-channel.ts POST_DELAY_MS): `{ ops, bufs, ring }`.
//   ops is a flat array of records, each starting with its Op code:
//     OPEN  id ...meta       a new object: the WIRE_META_FIELDS of its meta, flat (cheaper to
//                            clone than the meta's object graph, and vary and headers are
//                            already the JSON of its row); one whose size is at least
//                            STREAM_BYTES is posted at once and gets its temp file right away
//     DATA  id buf off len   body bytes: bufs[buf].subarray(off, off + len), or with buf -1
//                            the ring's bytes [off, off + len) (see below)
//     END   id               the body is complete: write, rename, commit the row, then settle
//     ABORT id               the stream was destroyed: remove its files, never commit; settle
//     BIG   id               the body passed every disk's object limit: keep nothing, and drop
//                            the stored variant it would have replaced (as a too-large
//                            replacement always did)
//     CLOSE                  finish everything already sent, close the index, reply `closed`
//     META  id op            an index change of the request path (MetaOp): run after the rows
//                            completed so far are committed, in its own transaction; settled
//                            once committed, its result in `vals`
//   Body bytes are copied once on the main thread, because the caller's chunks stay shared with
//   other readers (memory tier, client sockets, the replay buffer of coalesced fetches). They go
//   into the ring, a SharedArrayBuffer both threads hold (WriterInit.ring), so a message carries
//   no buffer and no memory is allocated (and page-faulted in) per message; `ring` is the
//   main thread's write position after this message. Only when the ring is full do they go into
//   ArrayBuffers transferred (not copied) with the message, `bufs`.
//   Ring positions count bytes ever written (a chunk never wraps: the rest of the ring is skipped
//   instead; and up to 7 bytes are skipped before a chunk so that it sits in the ring as it sits
//   in a word of its own buffer: writer-channel.ts WORD_ALIGN). When the thread has handled a message it no longer reads the ring below that
//   message's `ring` (bytes of bodies still open are copied out), and says so in Reply.ring.
// thread -> main: Reply. Every OPENed id is settled exactly once: committed (or dropped when too
//   large, or aborted) in `ok`, failed in `err`. `directory` hands over a filter of the URLs the
//   index holds (directory.ts), which the thread keeps adding to in place.
import type { CacheEntryMeta, StoredHeaders } from '../store.js';
import type { CachePolicyOptions } from '../policy/options.js';

/** A plain object, not a const enum: the test loader transpiles file by file. */
export const Op = { OPEN: 1, DATA: 2, END: 3, ABORT: 4, BIG: 5, CLOSE: 6, META: 7 } as const;

/** Fields of a stored entry a META update may change. */
export type MetaPatch = Partial<Pick<CacheEntryMeta, 'status' | 'headers' | 'requestTime' | 'cachedAt' | 'staleAt' | 'deleteAt' | 'invalidated'>>;

/** Index changes the request path hands to the writer thread instead of writing on the event loop. */
export type MetaOp =
  /** A 304 freshened (or a failed refresh restored) one variant. Result: 1 when the row exists. */
  | { t: 'update'; vhost: string; url: string; variant: string; patch: MetaPatch; now: number }
  /** An unsafe method invalidated URLs (IndexDb.invalidateUrls). Result: 0. */
  | { t: 'invalidate'; vhost: string; urls: string[]; now: number }
  /** The 304s of the request path, coalesced (writer-freshen.ts). Result: the rows freshened. */
  | { t: 'freshen'; items: FreshenItem[]; now: number };

/** A 304 to a conditional request for the stored variant `variant` (CacheStore.freshen). */
export interface FreshenItem {
  vhost: string;
  url: string;
  variant: string;
  /** The 304's fields, when its request was sent and when it arrived, the host's freshness rules. */
  headers: StoredHeaders;
  requestTime: number;
  receivedAt: number;
  policy: CachePolicyOptions;
}

export interface OpsMessage {
  ops: unknown[];
  bufs: ArrayBuffer[];
  /** Write position of the ring after this message's bytes. */
  ring: number;
}

export interface Reply {
  /** Ids settled successfully (entry committed, or nothing to keep). */
  ok?: number[];
  /** Ids that failed: [id, error code, message]. */
  err?: [number, string, string][];
  /** Body bytes written or discarded since the last reply (releases the in-flight bound). */
  freed?: number;
  /** Flat [id, bytes, ...] pairs: bytes of streams not yet ended that were written or dropped
   * (releases each stream's own bound). */
  acked?: number[];
  /** Flat [id, value, ...] pairs: results of META ops settled in `ok`. */
  vals?: number[];
  /** The host of each row evicted to make room since the last reply. */
  evicted?: string[];
  /** Disk statuses this thread changed (I/O errors), [index, status]. */
  disks?: [number, 'Normal' | 'Invalid'][];
  /** Ring position below which the thread reads nothing any more (OpsMessage.ring). */
  ring?: number;
  /** Answer to CLOSE: everything before it is settled and the thread's index is closed. */
  closed?: true;
  /** A new filter of the URLs with rows (directory.ts): the request path reads it from now on. */
  directory?: SharedArrayBuffer;
}

interface WriterDisk {
  path: string;
  quota: number;
  status: 'Normal' | 'Invalid';
}

/** workerData of the writer thread. */
export interface WriterInit {
  indexPath: string;
  disks: WriterDisk[];
  busyTimeoutMs: number;
  mmapBytes?: number;
  maxObjectBytes?: number;
  maxConsecutiveErrors: number;
  /** Rows that completed within this window share one transaction. */
  commitDelayMs: number;
  /** Period of re-reading disk statuses other processes may have changed. */
  refreshMs: number;
  /** The main thread's in-flight bound; freed bytes are reported well before it is reached. */
  maxInFlightBytes: number;
  /** Body bytes of DATA ops with buf -1 (see above). */
  ring: SharedArrayBuffer;
  /** UDP port of the node's log listener (env.log.meta.port): disk errors are reported there. */
  logPort?: number | undefined;
}

/** What the thread keeps of an object's meta: its row's fields, vary and headers as JSON. */
export interface WireMeta {
  vhost: string;
  url: string;
  variant: string;
  vary: string;
  status: number;
  headers: string;
  requestTime: number;
  cachedAt: number;
  staleAt: number;
  deleteAt: number;
  size: number;
  invalidated: number;
  /** The cache tags, space-separated ('' when none; a tag holds no space). */
  tags: string;
}

/** How many ops words an OPEN's meta takes (toWire / fromWire). */
export const WIRE_META_FIELDS = 13;

/** Writes a meta's wire form into ops from `at` (main thread); returns the index after it. */
export function toWire(ops: unknown[], at: number, m: CacheEntryMeta): number {
  ops[at] = m.key.vhost;
  ops[at + 1] = m.key.url;
  ops[at + 2] = m.variantKey;
  ops[at + 3] = m.vary.length === 0 ? '[]' : JSON.stringify(m.vary);
  ops[at + 4] = m.status;
  ops[at + 5] = JSON.stringify(m.headers);
  ops[at + 6] = m.requestTime;
  ops[at + 7] = m.cachedAt;
  ops[at + 8] = m.staleAt;
  ops[at + 9] = m.deleteAt;
  ops[at + 10] = m.size;
  ops[at + 11] = m.invalidated ?? 0;
  ops[at + 12] = m.tags === undefined ? '' : m.tags.join(' ');
  return at + WIRE_META_FIELDS;
}

/** Reads a meta's wire form from ops at i (thread). */
export function fromWire(ops: unknown[], i: number): WireMeta {
  return {
    vhost: ops[i] as string, url: ops[i + 1] as string, variant: ops[i + 2] as string, vary: ops[i + 3] as string,
    status: ops[i + 4] as number, headers: ops[i + 5] as string, requestTime: ops[i + 6] as number,
    cachedAt: ops[i + 7] as number, staleAt: ops[i + 8] as number, deleteAt: ops[i + 9] as number,
    size: ops[i + 10] as number, invalidated: ops[i + 11] as number, tags: ops[i + 12] as string,
  };
}

/** Announced body size from which an object streams to its temp file from the start. */
export const STREAM_BYTES = 256 * 1024;
