// Commands from the primary to a worker and their answers (management API operations: origin
// state, invalidation, fileinfo). One message per API call, never per client request.
import type { Worker } from 'node:cluster';
import type { WorkerMessage } from './messages.js';

export class RpcError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'RpcError';
  }
}

interface Pending { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }

export class RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  /** Feed every message of every worker here. */
  onMessage(m: WorkerMessage): void {
    if (m.type !== 'rpc-result') return;
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.result);
    else p.reject(new RpcError(m.error ?? 'worker command failed', m.code));
  }

  call<T>(worker: Worker, op: string, args: unknown, timeoutMs = 30_000): Promise<T> {
    if (!worker.isConnected()) return Promise.reject(new RpcError('worker not connected', 'RT_NOT_RUNNING'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcError(`worker did not answer ${op} within ${timeoutMs} ms`, 'RT_NOT_RUNNING'));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      worker.send({ type: 'rpc', id, op, args });
    });
  }
}

export type RpcHandler = (args: never) => Promise<unknown> | unknown;

/** Worker side: runs the handler of each command and sends its answer back. */
export function serveRpc(handlers: Record<string, RpcHandler>, send: (m: WorkerMessage) => void) {
  return (m: { id: number; op: string; args: unknown }): void => {
    const h = handlers[m.op];
    if (h === undefined) { send({ type: 'rpc-result', id: m.id, ok: false, error: `unknown command ${m.op}` }); return; }
    Promise.resolve().then(() => h(m.args as never)).then(
      (result) => send({ type: 'rpc-result', id: m.id, ok: true, result }),
      (err: Error & { code?: string }) => send({ type: 'rpc-result', id: m.id, ok: false, error: err.message, code: err.code }),
    );
  };
}
