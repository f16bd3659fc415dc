// Commands from the primary to a worker and their answers (management API operations: origin
// state, invalidation, fileinfo). One message per API call, never per client request.
import type { Worker } from 'node:cluster';
import { codedErrorFrom, rebuildCoded } from '../errors/codes.js';
import type { RpcArgs, RpcOp, RpcRequest, RpcResult, WorkerMessage } from './messages.js';

interface Pending { resolve(v: RpcResult<RpcOp>): void; reject(e: Error): void; timer: NodeJS.Timeout }

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
    else p.reject(rebuildCoded(m.code, m.error ?? 'worker command failed'));
  }

  call<K extends RpcOp>(worker: Worker, op: K, args: RpcArgs<K>, timeoutMs = 30_000): Promise<RpcResult<K>> {
    if (!worker.isConnected()) return Promise.reject(codedErrorFrom(new Error('worker not connected'), 'RT_NOT_RUNNING'));
    const id = this.nextId++;
    return new Promise<RpcResult<K>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(codedErrorFrom(new Error(`worker did not answer ${op} within ${timeoutMs} ms`), 'RT_NOT_RUNNING'));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: RpcResult<RpcOp>) => void, reject, timer });
      worker.send({ type: 'rpc', id, op, args });
    });
  }
}

/** The worker's handler of one operation. */
type RpcHandler<K extends RpcOp> = (args: RpcArgs<K>) => RpcResult<K> | Promise<RpcResult<K>>;

/** Handlers of the operations K (every operation by default). */
export type RpcHandlers<K extends RpcOp = RpcOp> = { [P in K]: RpcHandler<P> };

function run<K extends RpcOp>(handlers: RpcHandlers, op: K, args: RpcArgs<K>): RpcResult<K> | Promise<RpcResult<K>> {
  return handlers[op](args);
}

/** Worker side: runs the handler of each command and sends its answer back. */
export function serveRpc(handlers: RpcHandlers, send: (m: WorkerMessage) => void) {
  return (m: RpcRequest): void => {
    // The table is typed complete; a primary of another build could still name something else.
    if (!Object.hasOwn(handlers, m.op)) { send({ type: 'rpc-result', id: m.id, ok: false, error: `unknown command ${m.op}` }); return; }
    Promise.resolve().then(() => run(handlers, m.op, m.args)).then(
      (result) => send({ type: 'rpc-result', id: m.id, ok: true, result }),
      (err: Error & { code?: string }) => send({ type: 'rpc-result', id: m.id, ok: false, error: err.message, code: err.code }),
    );
  };
}
