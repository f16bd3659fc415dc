// Coalescing with read-while-writer: one origin fetch per cache key, however many clients miss
// it at once. Until the origin answers, clients wait in `waiting`; once the head is known they
// become readers that replay the chunks so far and then follow live, so none waits for the
// whole download. Chunks are kept until the object is stored (for latecomers) up to a cap beyond
// which latecomers fetch on their own rather than pin a huge object in memory. The origin is
// read at its own pace: a slow client buffers in its own socket and does not slow the others.
import type { Transaction } from './transaction.js';
import type { CacheEntryMeta, StoredHeaders } from '../../cache/store.js';
import type { Span } from '../../cache/policy/partial.js';

/** How far a piece's buffer is filled; `failed` once the answer broke off (the rest never comes). */
export interface PieceFill { got: number; failed: boolean; waiting: (() => void)[] }

/** What a piece fetch (piece-fetch.ts) comes to; its clients wait on `SharedFetch.piece`. */
export type PieceOutcome =
  /**
   * A 206 with one part (or a 200 of at most one piece): its buffer (filled up to `fill.got`),
   * the span it is, the validator tying it to others (undefined: none, only a whole span is
   * usable then).
   */
  | { kind: 'piece'; span: Span; body: Buffer; fill: PieceFill; headers: StoredHeaders; validator: string | undefined; vary: string[]; base: string }
  /** The origin answered 200 to a Range, the object longer than a piece: it does not serve ranges of it. */
  | { kind: 'whole' }
  /** Any other answer (416, 404, 5xx, a multipart 206 ...): the client is passed to the origin. */
  | { kind: 'other'; status: number }
  /** The origin could not be reached or the body broke. */
  | { kind: 'failed'; status: number };

/** `invalidated` of what a retired fetch stores after all: expired, revalidated before use. */
const LANDS_EXPIRED = 2;

/**
 * `list` with `item` added. A first item makes a one-element array: push() on an empty array
 * reserves room for 16 (most fetches have one client, one reader, one chunk).
 */
function added<T>(list: T[], item: T): T[] {
  if (list.length === 0) return [item];
  list.push(item);
  return list;
}

/**
 * The head of a shared answer (the fetch step's fetch): what each reader's head is written with,
 * and which waiting clients may share the answer. Called on it, never detached.
 */
export interface SharedHead {
  writeHead(tx: Transaction): void;
  accepts(tx: Transaction): boolean;
  /**
   * The body ended: the head keeps only what later joiners need. The fetch stays joinable until
   * its copy is stored (with the disk tier, until the writer thread commits it), and what it
   * holds lives that long.
   */
  bodyEnded(): void;
}

/** A store write of the answer in flight (SharedFetch.abandonStore). Called on it, never detached. */
export interface StoreWriting {
  /** Stops the write, unless it is already ending (then false: the object lands, see retire). */
  abandon(): boolean;
}

/** Replay bytes of all fetches of a worker together, bounded (the worker's memory bound). */
export interface ReplayBudget {
  used: number;
  readonly max: number;
}

/** start()'s answer when every waiting client shares the answer (callers only read it). */
const NONE_REFUSED: readonly Transaction[] = [];

export class SharedFetch {
  /** Clients that arrived before the origin answered. */
  waiting: Transaction[] = [];
  /** Set once the answer is known to be stored and shared. */
  meta: CacheEntryMeta | undefined;
  private head: SharedHead | undefined;
  private chunks: Buffer[] | null = [];
  private bytes = 0;
  /**
   * Clients following the answer live. One that leaves is dropped when next reached (live()):
   * its response is `destroyed` from the moment it closes, so no listener per reader is needed.
   */
  private readers: Transaction[] = [];
  /**
   * A body byte (or the end) arrived. Until then the readers' heads wait: an answer that breaks
   * before its first byte (a broken chunk size in the origin's first bytes) can still be a 502,
   * and node would send an HTTP/1 head with the first body write anyway.
   */
  private flowing = false;
  done = false;
  failed = false;
  /** An invalidation named its URL after it started: nobody may join it any more. */
  retired = false;
  /** Set by the fetch stage while the answer is written to the store. */
  abandonStore: StoreWriting | undefined;
  /** A piece fetch (piece-fetch.ts): its clients wait on this instead of joining as readers. */
  piece: Promise<PieceOutcome> | undefined;
  private settle: (() => void) | undefined;
  /** Made when first asked for (an invalidation waiting for this fetch): most fetches never are. */
  private settledPromise: Promise<void> | undefined;
  private isSettled = false;

  constructor(readonly key: string, private readonly maxReplayBytes: number, private readonly budget: ReplayBudget) {}

  /** Gives the replay chunks back to the budget; latecomers then fetch on their own. */
  dropReplay(): void {
    if (this.chunks === null) return;
    this.budget.used -= this.bytes;
    this.chunks = null;
  }

  /** Resolves when the fetch is over and its object, if any, is stored. */
  get settled(): Promise<void> {
    return (this.settledPromise ??= this.isSettled ? DONE : new Promise<void>((resolve) => { this.settle = resolve; }));
  }

  markSettled(): void {
    this.isSettled = true;
    this.settle?.();
    this.settle = undefined;
  }

  /**
   * The fetch is finished (InflightTable.finish): nobody joins it any more, so its head (the
   * fetch step's fetch: the request, the origin trace and the head) and its store writer are
   * let go. A finished fetch is still reachable a while (measured: its clusters of a miss
   * outlived two scavenges, ~1.2 KB each promoted and then swept by a mark-compact), and what
   * it held went with it.
   */
  release(): void {
    this.head = undefined;
    this.abandonStore = undefined;
  }

  get joinable(): boolean {
    return !this.failed && !this.retired && this.chunks !== null;
  }

  /**
   * An invalidation names this fetch's URL: it was requested before, so nobody may join it any
   * more and its answer is not stored (its clients still get it). A store write already ending
   * cannot be stopped: its memory copy lands expired (MemoryStore reads the meta when it puts the
   * object; a copy put already is dropped by the invalidation itself). Returns true in that case,
   * when the caller must wait for `settled` to see the object in the store.
   */
  retire(): boolean {
    this.retired = true;
    this.dropReplay();
    if (this.meta !== undefined) this.meta.invalidated = LANDS_EXPIRED;
    return this.abandonStore?.abandon() === false;
  }

  /** A client joins: it waits for the head, or replays what arrived so far and follows live. */
  join(tx: Transaction): void {
    if (this.head === undefined) { this.waiting = added(this.waiting, tx); return; }
    this.attach(tx);
  }

  private attach(tx: Transaction): void {
    const res = tx.res;
    // A HEAD's answer is its head: nothing of the body can break it.
    if (tx.req.method === 'HEAD') { this.head!.writeHead(tx); res.end(); return; }
    if (this.flowing) {
      this.head!.writeHead(tx);
      // Joiners come only while the replay is kept; the one client of a detached fetch attaches
      // before its first byte.
      if (this.chunks !== null) for (const c of this.chunks) res.write(c);
      if (this.done) { res.end(); return; }
    }
    this.readers = added(this.readers, tx);
  }

  /** The readers whose clients are still there (those that left are dropped from the list). */
  private live(): Transaction[] {
    const r = this.readers;
    let n = 0;
    for (let i = 0; i < r.length; i++) if (!r[i]!.res.destroyed) r[n++] = r[i]!;
    if (n !== r.length) r.length = n;
    return r;
  }

  /** The shared answer starts: `head.accepts` says which waiting clients may share it. */
  start(meta: CacheEntryMeta, head: SharedHead): readonly Transaction[] {
    if (this.retired) meta.invalidated = LANDS_EXPIRED;
    this.meta = meta;
    this.head = head;
    // Most fetches have one client, which shares the answer: no list of refused ones then.
    let refused: Transaction[] | undefined;
    const waiting = this.waiting;
    this.waiting = [];
    for (let i = 0; i < waiting.length; i++) if (head.accepts(waiting[i]!)) this.attach(waiting[i]!); else (refused ??= []).push(waiting[i]!);
    return refused ?? NONE_REFUSED;
  }

  /** The first body byte or the end: the readers' heads go out. */
  private flow(): void {
    this.flowing = true;
    const r = this.live();
    for (let i = 0; i < r.length; i++) this.head!.writeHead(r[i]!);
  }

  push(chunk: Buffer): void {
    if (!this.flowing) this.flow();
    if (this.chunks !== null) {
      if (this.bytes + chunk.length <= this.maxReplayBytes && this.budget.used + chunk.length <= this.budget.max) {
        this.bytes += chunk.length;
        this.budget.used += chunk.length;
        this.chunks = added(this.chunks, chunk);
      } else {
        this.dropReplay();
      }
    }
    const r = this.live();
    for (let i = 0; i < r.length; i++) r[i]!.res.write(chunk);
  }

  end(): void {
    if (!this.flowing) this.flow();
    this.done = true;
    const r = this.live();
    for (let i = 0; i < r.length; i++) r[i]!.res.end();
    this.readers = [];
    this.head?.bodyEnded();
  }

  /**
   * The fetch broke after its head: readers whose answer started get a cut connection (their
   * status line is out); those it had not reached yet are handed back for an error answer.
   */
  abort(): Transaction[] {
    this.failed = true;
    this.dropReplay();
    const r = this.live();
    this.readers = [];
    if (!this.flowing) return r;
    for (const tx of r) { tx.aborted = true; tx.res.destroy(); }
    return [];
  }

  /** Hands back the clients still waiting, and closes the fetch to newcomers. */
  takeWaiting(): Transaction[] {
    this.failed = true;
    const w = this.waiting;
    this.waiting = [];
    return w;
  }
}

const DONE: Promise<void> = Promise.resolve();

export class InflightTable {
  private readonly fetches = new Map<string, SharedFetch>();
  /** Fetches nobody may join, still tracked so an invalidation can wait for them to land. */
  private readonly unlisted = new Set<SharedFetch>();
  readonly budget: ReplayBudget;

  /** `maxReplayTotalBytes`: replay chunks of all fetches together (default 64 MiB). */
  constructor(maxReplayTotalBytes = 64 * 1024 * 1024) {
    this.budget = { used: 0, max: maxReplayTotalBytes };
  }

  get(key: string): SharedFetch | undefined {
    const f = this.fetches.get(key);
    return f !== undefined && f.joinable ? f : undefined;
  }

  create(key: string, maxReplayBytes: number): SharedFetch {
    const f = new SharedFetch(key, maxReplayBytes, this.budget);
    // One that may not be joined any more (retired, failed) is still tracked until it settles.
    const previous = this.fetches.get(key);
    if (previous !== undefined) this.unlisted.add(previous);
    this.fetches.set(key, f);
    return f;
  }

  /** A fetch nobody else may join (it is not registered under its key): it keeps no replay. */
  detached(key: string, maxReplayBytes: number): SharedFetch {
    const f = new SharedFetch(key, maxReplayBytes, this.budget);
    f.dropReplay();
    this.unlisted.add(f);
    return f;
  }

  /** Removes the fetch if it is still the registered one for its key; its replay is freed. */
  finish(f: SharedFetch): void {
    if (this.fetches.get(f.key) === f) this.fetches.delete(f.key);
    else this.unlisted.delete(f);
    f.dropReplay();
    f.markSettled();
    f.release();
  }

  /** Resolves when every fetch of the vhost whose URL starts with `prefix` has settled. */
  async settledUnder(vhost: string, prefix: string): Promise<void> {
    const start = `${vhost}\n${prefix}`;
    const pending: Promise<void>[] = [];
    for (const [key, f] of this.fetches) if (key.startsWith(start)) pending.push(f.settled);
    for (const f of this.unlisted) if (f.key.startsWith(start)) pending.push(f.settled);
    await Promise.all(pending);
  }

  /**
   * An invalidation of the vhost's URLs that start with `url` (`prefix`), or of that URL: every
   * fetch of them in flight retires (see SharedFetch.retire). Resolves once those whose store
   * write was already ending have landed; the others never land, and are not waited for.
   */
  retire(vhost: string, url: string, prefix: boolean): Promise<void> {
    if (this.fetches.size === 0 && this.unlisted.size === 0) return DONE;
    const start = `${vhost}\n${url}`;
    // Keys are `vhost \n url`, a refresh's `vhost \n url \n variant` (fetch.ts).
    const names = (key: string): boolean => key.startsWith(start) && (prefix || key.length === start.length || key.charCodeAt(start.length) === 10);
    const landing: Promise<void>[] = [];
    for (const [key, f] of this.fetches) if (names(key) && f.retire()) landing.push(f.settled);
    for (const f of this.unlisted) if (names(f.key) && f.retire()) landing.push(f.settled);
    return landing.length === 0 ? DONE : Promise.all(landing).then(() => undefined);
  }

  /**
   * A tag invalidation of the vhost: every fetch in flight whose answer carries the tag retires,
   * and so does every one whose answer is not known yet (it may carry it). As retire.
   */
  retireTagged(vhost: string, tag: string): Promise<void> {
    if (this.fetches.size === 0 && this.unlisted.size === 0) return DONE;
    const start = `${vhost}\n`;
    const names = (f: SharedFetch): boolean => f.key.startsWith(start) && (f.meta === undefined || f.meta.tags?.includes(tag) === true);
    const landing: Promise<void>[] = [];
    for (const f of this.fetches.values()) if (names(f) && f.retire()) landing.push(f.settled);
    for (const f of this.unlisted) if (names(f) && f.retire()) landing.push(f.settled);
    return landing.length === 0 ? DONE : Promise.all(landing).then(() => undefined);
  }

  /** The registered fetch of a key, joinable or not (to wait for its store write). */
  peek(key: string): SharedFetch | undefined {
    return this.fetches.get(key);
  }

  get size(): number {
    return this.fetches.size;
  }
}
