// Asynchronous invalidation (`/command/async/*`): commands wait in a bounded queue and run one
// after another, `asyncInterval` ms apart. While a command waits, every worker treats the
// content it names as if it had run already (pre-cache control): the workers hear of each change
// of the queue (prectrl-feed.ts: a command added, run, dropped; never the whole list, never per
// request).
import type { InvalidateKind } from '../cache/commands/invalidate.js';
import type { Target } from '../cache/commands/targets.js';
import { PRECTRL_SLICE, type PrectrlWireEntry } from '../ipc/messages.js';
import { systemLog } from '../log/system-log.js';
import { toWire } from '../ipc/wire.js';
import type { InvalidationService } from './invalidation-service.js';
import type { FedCommand, PrectrlFeed } from './prectrl-feed.js';

class QueuedCommand implements FedCommand {
  readonly off = new Set<string>();
  /** The entries the workers get, built slice by slice on first use (not 100,000 in one go). */
  private readonly slices: PrectrlWireEntry[][] = [];

  constructor(readonly id: number, readonly command: InvalidateKind, readonly url: string, readonly targets: Target[],
    readonly timestamp: string, readonly queuedAt: number, private readonly svc: InvalidationService) {}

  get size(): number { return this.targets.length; }

  slice(start: number): PrectrlWireEntry[] {
    const i = Math.floor(start / PRECTRL_SLICE);
    // What the command will really do to each target (purge2expire), not what was asked.
    this.slices[i] ??= this.targets.slice(i * PRECTRL_SLICE, (i + 1) * PRECTRL_SLICE)
      .map((t) => ({ vhost: t.vhost, kind: this.svc.kindFor(this.command, t), target: toWire(t), queuedAt: this.queuedAt }));
    return this.slices[i];
  }
}

export class AsyncInvalidationQueue {
  private readonly waiting: QueuedCommand[] = [];
  /** Hosts whose pre-cache control was reset and named by no command since (`enable` false). */
  private readonly prectrlOff = new Set<string>();
  private running = false;
  private lastId = 0;

  constructor(private readonly svc: InvalidationService, private readonly limits: () => { max: number; intervalMs: number },
    private readonly feed: PrectrlFeed) {
    feed.watch(() => this.waiting);
  }

  get used(): number { return this.waiting.length; }
  get max(): number { return this.limits().max; }

  /**
   * Queues a command; false when the queue is full. Resolves once every worker holds all of the
   * command's targets (pre-cache control), so a request that starts after the API's answer sees it.
   */
  async add(command: InvalidateKind, url: string, targets: Target[]): Promise<boolean> {
    if (this.waiting.length >= this.max) return false;
    const now = Date.now();
    // Copies cached at or after `queuedAt` count as refreshed since the command and are left
    // alone. A copy cached in the very millisecond the command arrived may be the old content
    // (loopback answers take less than that), so the boundary is the next millisecond.
    const queuedAt = now + 1;
    const c = new QueuedCommand(++this.lastId, command, url, targets, new Date(now).toISOString(), queuedAt, this.svc);
    this.waiting.push(c);
    for (const t of targets) this.prectrlOff.delete(t.vhost);
    if (!this.running) void this.drain();
    await this.feed.added(c);
    return true;
  }

  /** Clears every waiting command. */
  async reset(): Promise<number> {
    const n = this.waiting.length;
    this.waiting.length = 0;
    await this.feed.cleared();
    return n;
  }

  /**
   * Stops pre-cache control for one host: its waiting commands still run, unseen meanwhile; a
   * command queued later counts again (and `enable` is true again).
   */
  async resetPrectrl(vhost: string): Promise<void> {
    this.prectrlOff.add(vhost);
    for (const c of this.waiting) c.off.add(vhost);
    await this.feed.hostOff(vhost);
  }

  /** Waiting commands naming the host, as `/monitoring/asynctrl/actives` lists them. */
  listFor(vhost: string): { command: string; timestamp: string; url: string }[] {
    return this.waiting.filter((c) => c.targets.some((t) => t.vhost === vhost)).map((c) => ({ command: c.command, timestamp: c.timestamp, url: c.url }));
  }

  prectrlEnabled(vhost: string): boolean {
    return !this.prectrlOff.has(vhost);
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) {
        const interval = this.limits().intervalMs;
        if (interval > 0) await new Promise((r) => setTimeout(r, interval));
        const next = this.waiting[0];
        if (next === undefined) break;
        try {
          // Copies refreshed by pre-cache control since the command was queued are left alone.
          const out = await this.svc.run(next.command, next.targets, undefined, next.queuedAt);
          systemLog.info({ command: next.command, url: next.url, result: out.result }, 'asynchronous invalidation done');
        } catch (err) {
          systemLog.error({ command: next.command, url: next.url, err: (err as Error).message }, 'asynchronous invalidation failed');
        }
        if (this.waiting[0] === next) this.waiting.shift();
        await this.feed.dropped(next.id);
      }
    } finally {
      this.running = false;
    }
  }
}
