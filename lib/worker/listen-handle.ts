// How a worker's servers get their listening sockets. In the node, every socket comes from the
// supervisor (through the primary) as a duplicate of the one socket all processes of every
// primary generation accept on (lib/supervisor/listen-broker.ts); the worker listens on it
// exclusively (no node:cluster sharing) and says when it stops using it. A worker run in-process
// (tests) binds its own sockets.
import type net from 'node:net';
import type { PrimaryMessage, WorkerMessage } from '../ipc/messages.js';

const ANSWER_BOUND_MS = 30_000;

/** Listens `server` on host:port; resolves to the function that gives the socket back when it closes. */
export type Listener = (server: net.Server, host: string | null, port: number) => Promise<() => void>;

function listenOn(server: net.Server, target: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(target as net.ListenOptions, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** In-process: the server binds the port itself; closing it frees the port. */
export const bindDirectly: Listener = async (server, host, port) => {
  await listenOn(server, { host: host ?? undefined, port });
  return () => undefined;
};

/** The worker's side of the sockets the primary relays from the supervisor. */
export class SharedSockets {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(h: unknown): void; reject(e: Error): void }>();

  constructor(private readonly send: (m: WorkerMessage) => void) {}

  /** Feed the primary's `listen-handle` answers here, with the handle that came with them. */
  onMessage(m: Extract<PrimaryMessage, { type: 'listen-handle' }>, handle: unknown): void {
    const w = this.waiting.get(m.id);
    if (w === undefined) {
      // Too late (the request gave up): the socket is not used.
      (handle as { close(): void } | undefined)?.close();
      return;
    }
    this.waiting.delete(m.id);
    if (m.error !== undefined || handle === undefined) w.reject(new Error(m.error ?? 'no socket came with the answer'));
    else w.resolve(handle);
  }

  readonly listen: Listener = async (server, host, port) => {
    const id = this.nextId++;
    const handle = await new Promise<unknown>((resolve, reject) => {
      // Bounded: a lost answer fails this listener (and the setting) instead of hanging it.
      const timer = setTimeout(() => { this.waiting.delete(id); reject(new Error(`no socket for ${host ?? '*'}:${port} within 30 s`)); }, ANSWER_BOUND_MS);
      this.waiting.set(id, {
        resolve: (h) => { clearTimeout(timer); resolve(h); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.send({ type: 'listen-request', id, host, port });
    });
    try {
      await listenOn(server, handle);
    } catch (err) {
      (handle as { close(): void }).close();
      this.send({ type: 'unlisten', host, port });
      throw err;
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.send({ type: 'unlisten', host, port });
    };
  };
}
