// Compression at the edge, the serving part (issue 28). A hit of a compressible stored answer is
// answered in the coding the client prefers (lib/cache/policy/encoding.ts): from the encoded copy
// stored beside the object (variant key `U+0003 coding U+0003 base`, so a purge of the URL takes
// every copy, the disk index shares it with the other workers, and the origin is fetched once per
// object, not per coding), else made once by the host's bounded queue (lib/cache/encoder.ts, off
// the event loop) and stored. A client waits for that at most queue.maxWait; a full queue or a
// slow one gives the identity answer at once. Every answer of such an object carries
// Vary: Accept-Encoding. A copy belongs to the stored object it was made of (same cachedAt and
// requestTime: a refetch or a 304 merge makes a new one, whose copies are made anew).
//
// Range requests get the identity answer: ranges of a copy that is made on demand would let a
// client stitch pieces of two representations together.
import { Readable } from 'node:stream';
import type { CachedObject, CacheEntryMeta, StoredHeaders } from '../../cache/store.js';
import type { TieredStore } from '../../cache/tiered-store.js';
import {
  chooseEncoding, compressibleType, encodedHeaders, encodedVariantKey, mayEncode, typeRules, varyWithAcceptEncoding,
  type Coding, type CompressionRules,
} from '../../cache/policy/encoding.js';
import { responseDirectives } from '../../cache/policy/index.js';
import { Encoder } from '../../cache/encoder.js';
import type { Functions } from '../../setting/types.js';
import type { Transaction } from './transaction.js';
import { viewOf } from './stored-view.js';
import type { HostCompression } from './shapes.js';


/** Spellings remembered per host before the memo starts over (a client sending a new one each time). */
const MAX_CHOICES = 256;

export function compressionOf(c: Functions['compression']): HostCompression | undefined {
  if (!c.enable || c.encodings.length === 0) return undefined;
  return {
    rules: { ...typeRules(c.types), codings: c.encodings, minSize: c.minSize, maxSize: c.maxSize },
    encoder: new Encoder({ concurrency: c.queue.concurrency, maxQueued: c.queue.maxQueued, level: c.level }),
    maxWaitMs: c.queue.maxWait,
    choices: new Map(),
  };
}

/** chooseEncoding for this host, parsed once per Accept-Encoding spelling. */
function codingFor(comp: HostCompression, accept: string | string[] | undefined): Coding | 'identity' {
  if (accept === undefined) return 'identity';
  const spelling = typeof accept === 'string' ? accept : accept.join(',');
  let coding = comp.choices.get(spelling);
  if (coding === undefined) {
    coding = chooseEncoding(spelling, comp.rules.codings);
    if (comp.choices.size >= MAX_CHOICES) comp.choices.clear();
    comp.choices.set(spelling, coding);
  }
  return coding;
}

/** A stored object with other fields (the same body). */
function withHeaders(obj: CachedObject, headers: StoredHeaders): CachedObject {
  return { ...obj, headers, openBody: (start?: number, end?: number) => obj.openBody(start, end) };
}

/**
 * Whether a stored object may be compressed under the host's rules, worked out on its first hit
 * under them and kept on the copy's view (stored-view.ts), which a memory copy holds itself.
 */
function mayCompress(obj: CachedObject, rules: CompressionRules): boolean {
  const view = viewOf(obj);
  if (view.encodeRules === rules) return view.encodeOk;
  view.encodeOk = mayEncode(obj, rules, view.cc.noTransform);
  view.encodeRules = rules;
  view.identity = undefined;
  return view.encodeOk;
}

/** The identity answer of an object that may be compressed: its fields say Vary: Accept-Encoding (it is one of its representations). */
function identityOf(obj: CachedObject): CachedObject {
  return viewOf(obj).identity ??= withHeaders(obj, { ...obj.headers, vary: varyWithAcceptEncoding(obj.headers.vary) });
}

/** The deliver step's answer of a stored object (deliver.ts deliverCached): passed in, a part imports no step. */
type Deliver = (tx: Transaction, obj: CachedObject, now: number, drop?: readonly string[]) => void;

/** An encoded copy made of exactly this stored object. */
function copyOf(copy: CacheEntryMeta, base: CacheEntryMeta): boolean {
  return copy.cachedAt === base.cachedAt && copy.requestTime === base.requestTime;
}

/**
 * Answers a hit: in the client's coding when the host compresses and the object may be
 * compressed, else as deliverCached does. `drop`: fields a no-cache="..." forbids (such an
 * answer goes out as stored, with Vary).
 */
export function deliverNegotiated(store: TieredStore, tx: Transaction, obj: CachedObject, now: number, drop: readonly string[] | undefined,
  deliverCached: Deliver): void {
  const comp = tx.host.compression;
  const method = tx.req.method;
  if (comp === undefined || (method !== 'GET' && method !== 'HEAD')) { deliverCached(tx, obj, now, drop); return; }
  if (!mayCompress(obj, comp.rules)) { deliverCached(tx, obj, now, drop); return; }
  const coding = drop !== undefined || tx.req.headers.range !== undefined ? 'identity' : codingFor(comp, tx.req.headers['accept-encoding']);
  if (coding === 'identity') { deliverCached(tx, identityOf(obj), now, drop); return; }
  // Hot path: the copy in this worker's memory, no Promise.
  const held = store.peek(obj.key, encodedVariantKey(coding, obj.variantKey));
  if (held !== undefined && copyOf(held, obj)) { deliverCached(tx, held, now); return; }
  void encodedCopy(store, comp, obj, coding).then((copy) => {
    if (tx.res.destroyed) return; // the client left meanwhile: finish has run
    deliverCached(tx, copy ?? identityOf(obj), Date.now());
  });
}

/** The copy from the shared store, else made now; undefined: identity (queue full, too slow, no gain). */
async function encodedCopy(store: TieredStore, comp: HostCompression, obj: CachedObject, coding: Coding): Promise<CachedObject | undefined> {
  const variantKey = encodedVariantKey(coding, obj.variantKey);
  const stored = await store.get(obj.key, variantKey).catch(() => undefined);
  if (stored !== undefined && copyOf(stored, obj)) return stored;
  const jobKey = `${obj.key.vhost}\n${obj.key.url}\n${variantKey}\n${obj.cachedAt}`;
  const job = comp.encoder.encode(jobKey, coding, () => bodyOf(obj), (out) => storeCopy(store, obj, coding, variantKey, out));
  if (job === undefined) return undefined;
  // A failed compression (the body file vanished ...) leaves the identity answer: nobody waits.
  if (comp.maxWaitMs === 0) { job.catch(() => undefined); return undefined; }
  return (await withinMs(job, comp.maxWaitMs)) ?? undefined;
}

/** The promise's value, or undefined once `ms` passed or when it fails (the job goes on). */
function withinMs<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    p.then((v) => { clearTimeout(timer); resolve(v); }, () => { clearTimeout(timer); resolve(undefined); });
  });
}

async function bodyOf(obj: CachedObject): Promise<Buffer> {
  if (obj.body !== undefined) return obj.body;
  const chunks: Buffer[] = [];
  for await (const c of obj.openBody()) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Stores the copy beside its object, with the object's times (its Age and freshness are the
 * object's), and gives it for the clients waiting. A copy no smaller than the object is not
 * kept: identity serves better.
 */
function storeCopy(store: TieredStore, obj: CachedObject, coding: Coding, variantKey: string, out: Buffer): CachedObject | undefined {
  if (out.length >= obj.size) return undefined;
  const meta: CacheEntryMeta = {
    key: obj.key, variantKey, vary: [...obj.vary, 'accept-encoding'], status: obj.status, headers: encodedHeaders(obj.headers, coding, out.length),
    requestTime: obj.requestTime, cachedAt: obj.cachedAt, staleAt: obj.staleAt, deleteAt: obj.deleteAt, size: out.length,
    ...(obj.volatile === true ? { volatile: true } : {}),
  };
  const sink = store.openSink(meta);
  sink.write(out);
  sink.end(() => undefined);
  return { ...meta, body: out, openBody: (start = 0, end = out.length - 1) => Readable.from([out.subarray(start, end + 1)]) };
}

/**
 * The fields of the answer to the request that fetched a compressible object (sent as it
 * arrives, identity): Vary: Accept-Encoding like every later answer of it. The length is the
 * origin's Content-Length when it sent one.
 */
export function varyOfFetched(tx: Transaction, status: number, headers: Record<string, string | string[]>): void {
  const comp = tx.host.compression;
  if (comp === undefined || status !== 200) return;
  const ce = headers['content-encoding'];
  if (ce !== undefined && String(ce).trim().toLowerCase() !== 'identity') return;
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (length !== undefined && (length < comp.rules.minSize || length > comp.rules.maxSize)) return;
  if (!compressibleType(headers['content-type'], comp.rules) || String(headers.vary ?? '').trim() === '*') return;
  if (responseDirectives(headers).noTransform) return;
  headers.vary = varyWithAcceptEncoding(headers.vary);
}

/**
 * The Vary fields that key a fetched answer's variants. Under
 * functions.network.cache.compression.useOriginEncoding false the origin was asked for identity
 * whatever the client accepts (fetch.ts), so its answer does not vary with the client's
 * Accept-Encoding: one stored copy serves every client, and the edge does the encoding.
 */
export function storedVary(useOriginEncoding: boolean, vary: string[]): string[] {
  return useOriginEncoding || !vary.includes('accept-encoding') ? vary : vary.filter((v) => v !== 'accept-encoding');
}
