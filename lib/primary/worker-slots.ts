// The primary's worker slots: one per RT worker the setting asks for. A slot's worker is replaced
// when it dies (with back-off while replacements keep dying quickly), replaced one by one on a
// rolling restart (the new one listens before the old one drains), and the hash ring of ready
// slots is sent to every worker whenever it changes. How a worker is started and talked to
// (its messages) stays with the primary: `spawn`. Each worker process of a slot is a WorkerLife
// (worker-life.ts: starting, ready, draining, dead, and the table of allowed transitions); a
// slot's state is nothing but its lives.
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import type { PrimaryMessage } from '../ipc/messages.js';
import { reportError } from '../log/global/report.js';
import { systemLog } from '../log/system-log.js';
import type { Setting } from '../setting/types.js';
import { WorkerLife, type IllegalTransition } from './worker-life.js';

export interface Slot {
  index: number;
  quickDeaths: number;
  /**
   * Its worker processes that have not exited: at most one ready (the one on the ring), a
   * starting one during a start or a rolling replacement, draining ones on their way out.
   */
  lives: WorkerLife[];
}

/** A worker that dies sooner than this after its start counts as a quick death (back-off). */
const QUICK_DEATH_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;

export function workerCount(setting: Setting): number {
  const meta = setting.env.management.cluster.meta;
  if (!meta.enable) return 1;
  return meta.workers > 0 ? meta.workers : Math.max(1, os.availableParallelism());
}

export interface SlotHooks {
  /** Starts the worker of a slot; resolves once it listens and reported ready (see becameReady). */
  spawn(slot: Slot): Promise<Worker>;
  send(worker: Worker, m: PrimaryMessage): void;
  drainTimeoutMs(): number;
  /** The node is shutting down: no replacement, no rolling. */
  stopping(): boolean;
  /** Where an illegal state transition is reported (the system log by default). */
  illegal?: IllegalTransition;
}

/** The slot's serving worker, if it has one. */
function serving(slot: Slot): WorkerLife | undefined {
  return slot.lives.find((l) => l.phase === 'ready');
}

export class WorkerSlots {
  private readonly slots: Slot[] = [];

  constructor(private readonly hooks: SlotHooks) {}

  /** Starts `n` workers; rejects when one cannot start after a few tries. */
  async start(n: number): Promise<void> {
    for (let i = 0; i < n; i++) this.slots.push({ index: i, quickDeaths: 0, lives: [] });
    await Promise.all(this.slots.map((s) => this.startWithRetries(s)));
    this.broadcastRing();
  }

  /** A worker that fails at start-up is tried again a few times before the start fails. */
  private async startWithRetries(slot: Slot): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.hooks.spawn(slot);
        return;
      } catch (err) {
        if (attempt >= 3 || /EADDRINUSE|EACCES|EADDRNOTAVAIL/.test((err as Error).message)) throw err;
        systemLog.error({ worker: slot.index, attempt, err: (err as Error).message }, 'worker failed to start; trying again');
        reportError({ code: '5002', detail: `worker ${slot.index}, attempt ${attempt}: ${(err as Error).message}` });
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }

  /** `spawn` forked `worker` for `slot`: it is starting. */
  forked(slot: Slot, worker: Worker): void {
    slot.lives.push(new WorkerLife(worker, slot.index, this.hooks.illegal));
  }

  /** The slot's new worker serves: the one it replaces (a rolling restart) drains. */
  becameReady(slot: Slot, worker: Worker): void {
    const life = this.lifeOf(slot, worker);
    const previous = serving(slot);
    if (life === undefined || !life.to('ready')) return;
    if (previous !== undefined && previous !== life) this.drain(previous);
  }

  exited(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    const life = this.lifeOf(slot, worker);
    if (life === undefined) return;
    const was = life.phase;
    life.to('dead');
    slot.lives = slot.lives.filter((l) => l !== life);
    // A starting worker's failure is its spawn's (start, replace, roll); a draining one was done.
    if (was !== 'ready' || this.hooks.stopping()) return;
    this.broadcastRing();
    const lived = Date.now() - life.startedAt;
    slot.quickDeaths = lived < QUICK_DEATH_MS ? slot.quickDeaths + 1 : 0;
    systemLog.error({ worker: slot.index, code, signal }, 'worker died; replacing it');
    reportError({ code: '5001', detail: `worker ${slot.index} (pid ${worker.process.pid ?? '-'}) ${signal === null ? `exit code ${code}` : `signal ${signal}`}; replacing it` });
    this.replace(slot);
  }

  /** Starts a new worker for an empty slot, with back-off while replacements keep failing. */
  private replace(slot: Slot): void {
    const delay = slot.quickDeaths <= 1 ? 0 : Math.min(MAX_BACKOFF_MS, 250 * 2 ** (slot.quickDeaths - 2));
    if (delay > 0) systemLog.info({ worker: slot.index, restartInMs: delay }, 'worker restart delayed (back-off)');
    setTimeout(() => {
      if (this.hooks.stopping()) return;
      this.hooks.spawn(slot).then(() => this.broadcastRing(), (err: Error) => {
        systemLog.error({ worker: slot.index, err: err.message }, 'replacement failed');
        reportError({ code: '5002', detail: `worker ${slot.index} replacement: ${err.message}` });
        slot.quickDeaths++;
        if (serving(slot) === undefined) this.replace(slot);
      });
    }, delay).unref();
  }

  /** SIGUSR2: each worker is replaced by a new one that listens before the old one drains. */
  async roll(): Promise<void> {
    for (const slot of this.slots) {
      if (this.hooks.stopping()) return;
      try {
        await this.hooks.spawn(slot);
      } catch (err) {
        systemLog.error({ worker: slot.index, err: (err as Error).message }, 'rolling restart: replacement failed');
      }
    }
    systemLog.info('rolling restart done');
  }

  live(): Worker[] {
    return this.slots.flatMap((s) => serving(s)?.worker ?? []).filter((w) => w.isConnected());
  }

  /** Every worker process still connected: starting and draining ones serve requests too. */
  connected(): Worker[] {
    return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
  }

  /** Each slot's serving worker process, named as its system log lines name it (`worker-<index>`). */
  roles(): Array<{ role: string; pid: number }> {
    return this.slots.flatMap((s) => {
      const pid = serving(s)?.worker.process.pid;
      return pid === undefined ? [] : [{ role: `worker-${s.index}`, pid }];
    });
  }

  /** Each slot's worker for the status report: the serving one, else the newest one starting. */
  describe(): Array<{ index: number; pid: number | undefined; ready: boolean; startedAt: number }> {
    return this.slots.map((s) => {
      const life = serving(s) ?? s.lives.filter((l) => l.phase === 'starting').pop();
      const pid = life?.worker.isConnected() === true ? life.worker.process.pid : undefined;
      return { index: s.index, pid, ready: life?.phase === 'ready', startedAt: life?.startedAt ?? 0 };
    });
  }

  /** Three quick deaths in a row: the back-off is under way (see replace). */
  crashLooping(): boolean {
    return this.slots.some((s) => s.quickDeaths >= 3);
  }

  /** The ring (the slots that serve) to every serving and draining worker. */
  broadcastRing(): void {
    const members = this.slots.filter((s) => serving(s) !== undefined).map((s) => s.index);
    for (const s of this.slots) {
      for (const l of s.lives) if (l.phase === 'ready' || l.phase === 'draining') this.hooks.send(l.worker, { type: 'ring', members });
    }
  }

  /** Told to drain, it still serves what it has and follows the ring until it exits. */
  private drain(life: WorkerLife): void {
    if (life.to('draining')) this.hooks.send(life.worker, { type: 'drain', timeoutMs: this.hooks.drainTimeoutMs() });
  }

  /** The life of a worker this slot forked; a worker it never forked is reported, not adopted. */
  private lifeOf(slot: Slot, worker: Worker): WorkerLife | undefined {
    const life = slot.lives.find((l) => l.worker === worker);
    if (life === undefined) systemLog.error({ worker: slot.index, pid: worker.process.pid }, 'event of a worker the slot did not fork (a bug in the primary)');
    return life;
  }
}
