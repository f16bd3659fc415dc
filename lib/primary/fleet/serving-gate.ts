// Holds the workers' listening sockets back until the node may serve: with the Redis bus on,
// until the start's catch-up is done (Fleet.start). The catch-up runs on the workers whose cache
// is open: a worker asks for its sockets only after it opened the cache, so its first
// `listen-request` makes it one of them, before it is ready.
import type { Worker } from 'node:cluster';

export class ServingGate {
  private readonly cacheOpen = new Set<Worker>();
  private opened!: () => void;
  /** Resolves once a worker can run invalidations. */
  readonly cacheReady = new Promise<void>((r) => { this.opened = r; });
  private gate: Promise<void> = Promise.resolve();

  /** The node may serve once `until` settles (it never rejects). */
  hold(until: Promise<void>): void {
    this.gate = until;
  }

  /** A worker asked for a listening socket: `relay` runs once the node may serve. */
  listen(worker: Worker, relay: () => void): void {
    if (!this.cacheOpen.has(worker)) {
      this.cacheOpen.add(worker);
      worker.once('exit', () => this.cacheOpen.delete(worker));
    }
    this.opened();
    void this.gate.then(relay);
  }

  /** A worker became ready (one without service ports never asks for sockets). */
  ready(): void {
    this.opened();
  }

  /** The live workers, or at start those whose cache is open. */
  workers(live: Worker[]): Worker[] {
    return live.length > 0 ? live : [...this.cacheOpen].filter((w) => w.isConnected());
  }
}
