// Pre-cache control on its way to the workers: what changed in the queue of asynchronous commands
// (lib/primary/async-queue.ts), never the whole list. Publishing the whole list on every change
// cost 14 MB of JSON for one command of 100,000 targets, a few hundred milliseconds of stall per
// worker on each side, and management API answers of half a second.
//
// So a new command goes as `prectrl-add` slices of PRECTRL_SLICE entries, each awaited (the
// primary's event loop turns between them), a command that ran as `prectrl-drop`, a reset as
// `prectrl-clear`, a host's reset as `prectrl-host-off`. Changes only make sense in order, so each
// worker has one chain of deliveries: a change starts once the previous one reached that worker.
//
// A worker gets the waiting commands when it says hello, before its setting: it opens its
// listening sockets only when applying that setting, so it never serves without them (a
// restarted worker would otherwise serve a copy an acknowledged asynchronous purge names).
import type { Worker } from 'node:cluster';
import { PRECTRL_SLICE, type PrectrlWireEntry } from '../ipc/messages.js';
import type { RpcClient } from '../ipc/rpc.js';
import { systemLog } from '../log/system-log.js';

/** What the feed needs of a waiting command. */
export interface FedCommand {
  /** Its place in the queue: ids grow in queue order. */
  readonly id: number;
  /** Its entries from `start`, at most PRECTRL_SLICE (none past the end); the same for every worker. */
  slice(start: number): PrectrlWireEntry[];
  readonly size: number;
  /** Hosts whose pre-cache control was reset while it waited: their entries no longer count. */
  readonly off: ReadonlySet<string>;
}

export class PrectrlFeed {
  /** Per worker that was greeted, its deliveries so far (each change starts after the one before). */
  private readonly chains = new Map<Worker, Promise<void>>();
  private waiting: () => readonly FedCommand[] = () => [];

  constructor(private readonly rpc: Pick<RpcClient, 'call'>) {}

  /** Where the waiting commands are read when a worker starts (the queue, once the API exists). */
  watch(waiting: () => readonly FedCommand[]): void {
    this.waiting = waiting;
  }

  /**
   * A worker said hello: it gets every waiting command, then `then` runs (its setting is sent).
   * Nothing waiting (the common case): `then` runs now.
   */
  greet(worker: Worker, then: () => void): void {
    this.forgetGone();
    const commands = this.waiting().map((c) => ({ c, off: new Set(c.off) }));
    const greeted = this.enqueue(worker, async () => {
      for (const { c, off } of commands) await this.send(worker, c, off);
    });
    if (commands.length === 0) then();
    else void greeted.finally(then);
  }

  /** Resolves once every worker holds the whole command (a request after that sees it). */
  added(c: FedCommand): Promise<void> {
    return this.everywhere((w) => this.send(w, c, c.off));
  }

  dropped(id: number): Promise<void> {
    return this.everywhere(async (w) => { await this.rpc.call(w, 'prectrl-drop', { id }); });
  }

  cleared(): Promise<void> {
    return this.everywhere(async (w) => { await this.rpc.call(w, 'prectrl-clear', {}); });
  }

  hostOff(vhost: string): Promise<void> {
    return this.everywhere(async (w) => { await this.rpc.call(w, 'prectrl-host-off', { vhost }); });
  }

  /** A command's entries (but those of `off` hosts) to one worker, slice after slice. */
  private async send(worker: Worker, c: FedCommand, off: ReadonlySet<string>): Promise<void> {
    for (let start = 0; start < c.size; start += PRECTRL_SLICE) {
      const slice = c.slice(start);
      const entries = off.size === 0 ? slice : slice.filter((e) => !off.has(e.vhost));
      if (entries.length > 0) await this.rpc.call(worker, 'prectrl-add', { id: c.id, entries });
    }
  }

  /** The change to every greeted worker still connected, each after what it was sent before. */
  private everywhere(step: (w: Worker) => Promise<void>): Promise<void> {
    this.forgetGone();
    return Promise.all([...this.chains.keys()].map((w) => this.enqueue(w, () => step(w)))).then(() => undefined);
  }

  private forgetGone(): void {
    for (const w of this.chains.keys()) if (!w.isConnected()) this.chains.delete(w);
  }

  /** Never rejects: a worker that left needs nothing more; one that failed is logged. */
  private enqueue(worker: Worker, step: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(worker) ?? Promise.resolve()).then(step).catch((err: Error) => {
      if (worker.isConnected()) systemLog.error({ pid: worker.process.pid, err: err.message }, 'pre-cache control not delivered to a worker');
    });
    this.chains.set(worker, next);
    return next;
  }
}
