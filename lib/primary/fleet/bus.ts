// env.management.cluster.bus (ours): the Redis invalidation bus. Every node appends the
// invalidations its API accepts to one Redis Stream (XADD) and applies every entry of the
// others, one at a time in stream order, from its own position: the id of the last entry it
// applied, kept in Redis under `<stream>:position:<node>` and saved after each entry. A node
// that was down reads on from there, so it misses nothing the stream still holds; at start
// `catchUp` applies everything up to the tail before the node serves (the primary holds the
// workers' listening sockets until then, bounded by startTimeout). An entry is saved as applied
// only after it ran: a crash between the two runs it once more (invalidations are idempotent).
// The XREAD BLOCK loop runs in the primary, on its own connection; nothing here is on a
// request path.
import os from 'node:os';
import { Redis } from 'ioredis';
import type { Setting } from '../../setting/types.js';
import { entrySlices, idAfter, parseEntry, targetsForLog, type BusEntry } from './bus-entry.js';
import type { BusFigures } from '../../stats/realtime-view.js';

type StreamItem = [id: string, fields: string[]];

export interface BusDeps {
  setting(): Setting;
  /** Runs one entry here (an entry whose host this node does not serve throws; it is logged and passed). */
  apply(entry: BusEntry): Promise<void>;
  info(message: string, fields: Record<string, unknown>): void;
  error(message: string, fields: Record<string, unknown>): void;
}

const BATCH = 100;
const BLOCK_MS = 5000;
const PENDING_CAP = 10_000;
const FIGURES_EVERY_MS = 2000;
const RETRY_MS = 1000;

export class InvalidationBus {
  private readonly writer: Redis;
  private readonly reader: Redis;
  private position = '0-0';
  private stopped = false;
  private applied = 0;
  private appended = 0;
  private pending = 0;
  private lagSeconds = 0;
  private figuresTimer: NodeJS.Timeout | undefined;
  readonly node: string;
  private readonly stream: string;

  constructor(private readonly deps: BusDeps) {
    const c = deps.setting().env.management.cluster.bus;
    this.node = c.node !== '' ? c.node : os.hostname();
    this.stream = c.stream;
    this.caughtUp = new Promise((r) => { this.caught = r; });
    const opts = { connectionName: `svc-bus-${this.node}`, retryStrategy: (n: number) => Math.min(n * 200, 5000) };
    this.writer = new Redis(c.url, opts);
    this.reader = new Redis(c.url, { ...opts, maxRetriesPerRequest: null });
    let down = false;
    this.writer.on('error', (err: Error) => {
      if (!down) deps.error('invalidation bus: Redis unreachable', { url: redacted(c.url), reason: err.message });
      down = true;
    });
    this.reader.on('error', () => undefined); // the writer's line says it once
    this.writer.on('ready', () => {
      if (down) deps.info('invalidation bus: Redis reachable again', { url: redacted(c.url) });
      down = false;
    });
  }

  private get positionKey(): string {
    return `${this.stream}:position:${this.node}`;
  }

  /** Resolves once the start's catch-up is done (`run` keeps trying while Redis is down). */
  readonly caughtUp: Promise<void>;
  private caught!: () => void;

  /**
   * Reads this node's position (a node new to the bus starts at the tail: it missed nothing)
   * and applies every entry up to the tail; resolves to how many were read.
   */
  private async catchUp(): Promise<number> {
    const saved = await this.writer.get(this.positionKey);
    const last = await this.writer.xrevrange(this.stream, '+', '-', 'COUNT', 1) as StreamItem[];
    const tail = last[0]?.[0] ?? '0-0';
    if (saved === null) {
      this.position = tail;
      await this.writer.set(this.positionKey, tail);
      this.deps.info('invalidation bus: node joined at the tail', { node: this.node, position: tail });
      return 0;
    }
    this.position = saved;
    let n = 0;
    while (idAfter(tail, this.position)) {
      const items = await this.writer.xrange(this.stream, `(${this.position}`, tail, 'COUNT', BATCH) as StreamItem[];
      if (items.length === 0) break;
      for (const item of items) { await this.applyItem(item); n++; }
    }
    this.deps.info('invalidation bus: caught up', { node: this.node, read: n, position: this.position });
    return n;
  }

  /**
   * The bus's life in the primary (not awaited by the start): the catch-up, tried again while
   * Redis cannot be reached, then the XREAD BLOCK loop; ends with `stop`.
   */
  async run(): Promise<void> {
    this.figuresTimer ??= setInterval(() => void this.refreshFigures(), FIGURES_EVERY_MS).unref();
    for (let positioned = false; !positioned && !this.stopped;) {
      try {
        await this.catchUp();
        positioned = true;
      } catch (err) {
        if (this.stopped) return;
        this.deps.error('invalidation bus: catch-up failed; retrying', { reason: (err as Error).message });
        await new Promise((r) => setTimeout(r, RETRY_MS).unref());
      }
    }
    this.caught();
    while (!this.stopped) {
      try {
        const got = await this.reader.xread('COUNT', BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', this.stream, this.position) as Array<[string, StreamItem[]]> | null;
        for (const item of got?.[0]?.[1] ?? []) {
          if (this.stopped) return;
          await this.applyItem(item);
        }
      } catch (err) {
        if (this.stopped) return;
        this.deps.error('invalidation bus: read failed; retrying', { reason: (err as Error).message });
        await new Promise((r) => setTimeout(r, RETRY_MS).unref());
      }
    }
  }

  private async applyItem([id, fields]: StreamItem): Promise<void> {
    const e = parseEntry(fields);
    if (e !== undefined && 'refused' in e) {
      this.deps.info('invalidation bus: entry refused', { id, node: e.node, reason: e.refused });
    } else if (e !== undefined && e.node !== this.node) {
      try {
        await this.deps.apply(e);
        this.applied++;
      } catch (err) {
        this.deps.info('invalidation bus: entry not applied here', { id, kind: e.kind, ...targetsForLog(e.targets), reason: (err as Error).message });
      }
    }
    this.position = id;
    // Between two refreshes the figures follow what was applied.
    this.pending = Math.max(0, this.pending - 1);
    if (this.pending === 0) this.lagSeconds = 0;
    await this.writer.set(this.positionKey, id);
  }

  /**
   * Appends an invalidation this node received (not one it applies from the bus), as as many
   * bounded entries as it takes (bus-entry.ts), one XADD at a time: a large one never holds the
   * primary's event loop for long. Logged when Redis refuses, or a target is too large to carry.
   */
  append(entry: Omit<BusEntry, 'node'>): void {
    void this.appendSlices({ ...entry, node: this.node });
  }

  private async appendSlices(entry: BusEntry): Promise<void> {
    const maxLen = this.deps.setting().env.management.cluster.bus.maxLen;
    const tooLarge = (t: BusEntry['targets'][number]): void => this.deps.error('invalidation bus: target too large for an entry; the other nodes will not get it from the bus',
      { kind: entry.kind, target: t.text.slice(0, 200), bytes: Buffer.byteLength(t.text) });
    for (const f of entrySlices(entry, tooLarge)) {
      try {
        await this.writer.xadd(this.stream, 'MAXLEN', '~', maxLen, '*', ...f);
        this.appended++;
      } catch (err) {
        this.deps.error('invalidation bus: append failed; the other nodes will not get it from the bus', { kind: entry.kind, ...targetsForLog(entry.targets), reason: (err as Error).message });
        return;
      }
    }
  }

  private async refreshFigures(): Promise<void> {
    if (this.writer.status !== 'ready') return;
    try {
      const items = await this.writer.xrange(this.stream, `(${this.position}`, '+', 'COUNT', PENDING_CAP) as StreamItem[];
      this.pending = items.length;
      this.lagSeconds = items.length === 0 ? 0 : Math.max(0, (Date.now() - Number(items[0]![0].split('-')[0])) / 1000);
    } catch { /* the next refresh tries again */ }
  }

  figures(): BusFigures {
    return { Connected: this.writer.status === 'ready', Pending: this.pending, LagSeconds: Math.round(this.lagSeconds * 1000) / 1000, Applied: this.applied, Appended: this.appended, Position: this.position };
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.figuresTimer);
    this.reader.disconnect();
    this.writer.disconnect();
  }
}

/** The URL without its password, for the logs. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(bad URL)';
  }
}
