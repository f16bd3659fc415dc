// Asynchronous invalidation (`/command/async/*`): commands wait in a bounded queue and run one
// after another, `asyncInterval` ms apart. While a command waits, every worker treats the
// content it names as if it had run already (pre-cache control): the workers hold the list of
// waiting targets, sent to them whenever it changes (never per request).
import type { InvalidateKind } from '../cache/commands/invalidate.js';
import type { Target } from '../cache/commands/targets.js';
import { systemLog } from '../log/system-log.js';
import { toWire, type WireTarget } from '../ipc/wire.js';
import type { InvalidationService } from './invalidation-service.js';

export interface QueuedCommand { command: InvalidateKind; url: string; targets: Target[]; timestamp: string; queuedAt: number }

export interface PrectrlEntry { vhost: string; kind: InvalidateKind; target: WireTarget; queuedAt: number }

export class AsyncInvalidationQueue {
  private readonly waiting: QueuedCommand[] = [];
  /** Hosts whose pre-cache control was reset: their queued commands still run, unseen meanwhile. */
  private readonly prectrlOff = new Set<string>();
  private running = false;

  constructor(private readonly svc: InvalidationService, private readonly limits: () => { max: number; intervalMs: number },
    private readonly publish: (entries: PrectrlEntry[]) => Promise<void>) {}

  get used(): number { return this.waiting.length; }
  get max(): number { return this.limits().max; }

  /**
   * Queues a command; false when the queue is full. Resolves once every worker holds the new
   * pre-cache control list, so a request that starts after the API's answer sees it.
   */
  async add(command: InvalidateKind, url: string, targets: Target[]): Promise<boolean> {
    if (this.waiting.length >= this.max) return false;
    const now = Date.now();
    // Copies cached at or after `queuedAt` count as refreshed since the command and are left
    // alone. A copy cached in the very millisecond the command arrived may be the old content
    // (loopback answers take less than that), so the boundary is the next millisecond.
    const queuedAt = now + 1;
    this.waiting.push({ command, url, targets, timestamp: new Date(now).toISOString(), queuedAt });
    for (const t of targets) this.prectrlOff.delete(t.vhost);
    if (!this.running) void this.drain();
    await this.publishNow();
    return true;
  }

  /** Clears every waiting command. */
  async reset(): Promise<number> {
    const n = this.waiting.length;
    this.waiting.length = 0;
    await this.publishNow();
    return n;
  }

  /** Stops pre-cache control for one host; its queued commands still run. */
  async resetPrectrl(vhost: string): Promise<void> {
    this.prectrlOff.add(vhost);
    await this.publishNow();
  }

  /** Waiting commands naming the host, as `/monitoring/asynctrl/actives` lists them. */
  listFor(vhost: string): { command: string; timestamp: string; url: string }[] {
    return this.waiting.filter((c) => c.targets.some((t) => t.vhost === vhost)).map((c) => ({ command: c.command, timestamp: c.timestamp, url: c.url }));
  }

  prectrlEnabled(vhost: string): boolean {
    return !this.prectrlOff.has(vhost);
  }

  private entries(): PrectrlEntry[] {
    const out: PrectrlEntry[] = [];
    for (const c of this.waiting) {
      for (const t of c.targets) {
        // What the command will really do to the target (purge2expire), not what was asked.
        if (!this.prectrlOff.has(t.vhost)) out.push({ vhost: t.vhost, kind: this.svc.kindFor(c.command, t), target: toWire(t), queuedAt: c.queuedAt });
      }
    }
    return out;
  }

  private publishNow(): Promise<void> {
    return this.publish(this.entries()).catch((err: Error) => systemLog.error({ err: err.message }, 'pre-cache control not published'));
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
        await this.publishNow();
      }
    } finally {
      this.running = false;
    }
  }
}
