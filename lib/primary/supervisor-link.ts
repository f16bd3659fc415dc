// The primary's side of the supervisor (lib/supervisor): the listening sockets its workers ask
// for, and the steps of a restart. A primary always runs under a supervisor (`svc start`).
import type { Worker } from 'node:cluster';
import { listenKey } from '../supervisor/listen-broker.js';
import type { FromSupervisor, ToSupervisor } from '../ipc/supervisor-messages.js';
import type { WorkerMessage } from '../ipc/messages.js';

type Waiter = { resolve(handle: { close(): void }): void; reject(e: Error): void };

export class SupervisorLink {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiter>();
  private restarting: { resolve(): void; reject(e: Error): void } | undefined;
  private bound: (() => void) | undefined;
  /** Called at `handover`: the new primary serves; answer the caller, close the ports, `released()`. */
  onHandover: () => void = () => undefined;

  constructor() {
    process.on('message', (m: FromSupervisor, handle: unknown) => this.onMessage(m, handle));
    // The supervisor is gone (killed): nothing holds the sockets for a next start and nobody
    // would forward a stop, so the node ends now; the workers follow their primary's channel.
    process.on('disconnect', () => process.exit(1));
  }

  private send(m: ToSupervisor): void {
    if (process.connected) process.send!(m);
  }

  private onMessage(m: FromSupervisor, handle: unknown): void {
    switch (m.type) {
      case 'listen-result': {
        const w = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        if (m.error !== undefined || handle === undefined) w?.reject(new Error(m.error ?? 'no socket came with the answer'));
        else w?.resolve(handle as { close(): void });
        return;
      }
      case 'handover':
        this.restarting?.resolve();
        this.restarting = undefined;
        this.onHandover();
        return;
      case 'restart-failed':
        this.restarting?.reject(new Error(m.reason));
        this.restarting = undefined;
        return;
      case 'bind':
        this.bound?.();
        return;
    }
  }

  private owner(worker: Worker): string {
    return `${process.pid}/${worker.id}/`;
  }

  /** A worker's `listen-request`: the socket is relayed to it (the primary keeps no copy). */
  relayListen(worker: Worker, m: Extract<WorkerMessage, { type: 'listen-request' }>): void {
    const id = this.nextId++;
    new Promise<{ close(): void }>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.send({ type: 'listen', id, owner: this.owner(worker), host: m.host, port: m.port });
    }).then((handle) => {
      if (!worker.isConnected()) {
        handle.close();
        this.send({ type: 'unlisten', owner: this.owner(worker), key: listenKey(m.host, m.port) });
        return;
      }
      worker.send({ type: 'listen-handle', id: m.id }, handle as never, () => handle.close());
    }, (err: Error) => {
      if (worker.isConnected()) worker.send({ type: 'listen-handle', id: m.id, error: err.message });
    });
  }

  unlisten(worker: Worker, m: Extract<WorkerMessage, { type: 'unlisten' }>): void {
    this.send({ type: 'unlisten', owner: this.owner(worker), key: listenKey(m.host, m.port) });
  }

  /** A worker exited: every socket it held. */
  workerGone(worker: Worker): void {
    this.send({ type: 'unlisten-all', prefix: this.owner(worker) });
  }

  /** Asks for a new primary; resolves when it serves (then `onHandover` runs), rejects when it failed. */
  restart(): Promise<void> {
    if (this.restarting !== undefined) return Promise.reject(new Error('a restart is already under way'));
    return new Promise((resolve, reject) => {
      this.restarting = { resolve, reject };
      this.send({ type: 'restart' });
    });
  }

  stopping(): void {
    this.send({ type: 'stop' });
  }

  /** New primary: the workers serve; resolves when the old primary freed the management ports. */
  serving(): Promise<void> {
    return new Promise((resolve) => {
      this.bound = resolve;
      this.send({ type: 'serving' });
    });
  }

  released(): void {
    this.send({ type: 'released' });
  }

  started(): void {
    this.send({ type: 'started' });
  }

  /** Resolves once the message left (the process exits next). */
  startFailed(reason: string): Promise<void> {
    if (!process.connected) return Promise.resolve();
    return new Promise((resolve) => process.send!({ type: 'start-failed', reason } satisfies ToSupervisor, undefined, {}, () => resolve()));
  }
}
