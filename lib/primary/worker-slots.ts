// The primary's worker slots: one per RT worker the setting asks for. A slot's worker is replaced
// when it dies (with back-off while replacements keep dying quickly), replaced one by one on a
// rolling restart (the new one listens before the old one drains), and the hash ring of ready
// slots is sent to every worker whenever it changes. How a worker is started and talked to
// (its messages) stays with the primary: `spawn`.
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import type { PrimaryMessage } from '../ipc/messages.js';
import { reportError } from '../log/global/report.js';
import { systemLog } from '../log/system-log.js';
import type { Setting } from '../setting/types.js';

export interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  quickDeaths: number;
  ready: boolean;
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
}

export class WorkerSlots {
  private readonly slots: Slot[] = [];
  /** Workers told to drain: they still serve what they have and follow the ring until they exit. */
  private readonly retiring = new Set<Worker>();

  constructor(private readonly hooks: SlotHooks) {}

  /** Starts `n` workers; rejects when one cannot start after a few tries. */
  async start(n: number): Promise<void> {
    for (let i = 0; i < n; i++) this.slots.push({ index: i, worker: undefined, startedAt: 0, quickDeaths: 0, ready: false });
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

  /** The slot's new worker serves: the one it replaces (a rolling restart) drains. */
  becameReady(slot: Slot, worker: Worker): void {
    const previous = slot.worker;
    slot.worker = worker;
    slot.ready = true;
    if (previous !== undefined && previous !== worker) this.retire(previous);
  }

  exited(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    this.retiring.delete(worker);
    if (slot.worker !== worker || this.hooks.stopping()) return;
    slot.worker = undefined;
    slot.ready = false;
    this.broadcastRing();
    const lived = Date.now() - slot.startedAt;
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
        if (slot.worker === undefined) this.replace(slot);
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
    return this.slots.filter((s) => s.ready && s.worker !== undefined && s.worker.isConnected()).map((s) => s.worker!);
  }

  /** Every worker process still connected: starting and draining ones serve requests too. */
  connected(): Worker[] {
    return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
  }

  /** Each slot's worker, for the status report. */
  describe(): Array<{ index: number; pid: number | undefined; ready: boolean; startedAt: number }> {
    return this.slots.map((s) => ({ index: s.index, pid: s.worker?.isConnected() === true ? s.worker.process.pid : undefined, ready: s.ready, startedAt: s.startedAt }));
  }

  pids(): number[] {
    return this.slots.flatMap((s) => (s.worker?.process.pid === undefined ? [] : [s.worker.process.pid]));
  }

  /** Three quick deaths in a row: the back-off is under way (see replace). */
  crashLooping(): boolean {
    return this.slots.some((s) => s.quickDeaths >= 3);
  }

  broadcastRing(): void {
    const members = this.slots.filter((s) => s.ready).map((s) => s.index);
    for (const s of this.slots) if (s.worker) this.hooks.send(s.worker, { type: 'ring', members });
    for (const w of this.retiring) this.hooks.send(w, { type: 'ring', members });
  }

  private retire(worker: Worker): void {
    this.retiring.add(worker);
    this.hooks.send(worker, { type: 'drain', timeoutMs: this.hooks.drainTimeoutMs() });
  }
}
