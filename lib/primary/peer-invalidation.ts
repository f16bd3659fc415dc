// The workers' part of an invalidation, paid on the rare side. Each worker keeps its own memory
// tier, so whoever invalidates (a worker after an unsafe method or a PURGE, the primary for a
// management command) has every other worker drop its memory copies and answers only once all
// acknowledged: a request that starts after the answer, in any worker, cannot get the old copy,
// and no request ever asks whether something was invalidated.
import type { Worker } from 'node:cluster';
import type { Invalidation } from '../cache/commands/invalidate.js';
import type { RpcArgs, RpcOp, WorkerMessage } from '../ipc/messages.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { WireTarget } from '../ipc/wire.js';
import { systemLog } from '../log/system-log.js';
import { reportError } from '../log/global/report.js';

/** How long an invalidation waits for the memory drops before it answers anyway (and logs). */
const DROP_BOUND_MS = 5000;
/** How long an invalidation waits for the writes under its targets that were already ending. */
const SETTLE_BOUND_MS = 30_000;

/** Every connected worker process: ready ones, starting ones and draining ones all serve. */
export type WorkerList = () => Worker[];

/**
 * Sends `op` to each worker; resolves once each answered or disconnected, or `boundMs` passed.
 * Resolves to the workers that did not answer (silent past the bound, or failed).
 */
async function askEach<K extends RpcOp>(rpc: RpcClient, workers: readonly Worker[], op: K, args: RpcArgs<K>, boundMs: number): Promise<Worker[]> {
  const silent = await Promise.all(workers.map((w) => new Promise<boolean>((resolve) => {
    if (!w.isConnected()) { resolve(false); return; }
    const gone = (): void => resolve(false);
    w.once('disconnect', gone);
    rpc.call(w, op, args, boundMs).then(() => false, () => w.isConnected()).then((s) => {
      w.off('disconnect', gone);
      resolve(s);
    });
  })));
  return workers.filter((_, i) => silent[i]);
}

function logSilent(what: string, silent: Worker[], detail: Record<string, unknown>): void {
  if (silent.length === 0) return;
  const pids = silent.map((w) => w.process.pid);
  systemLog.error({ ...detail, workers: pids }, `invalidation went on without every worker: ${what}`);
  reportError({ code: '5003', detail: `${what}; workers ${pids.join(',')} did not answer` });
}

/** Every worker but `except` drops its memory copies of `items`. */
export async function dropMemoryEverywhere(rpc: RpcClient, workers: WorkerList, items: Invalidation[], except?: Worker,
  boundMs = DROP_BOUND_MS): Promise<void> {
  const silent = await askEach(rpc, workers().filter((w) => w !== except), 'drop-memory', { items }, boundMs);
  logSilent(`no memory drop acknowledged within ${boundMs} ms`, silent, { items });
}

/** Every worker but `except` retires its fetches under the targets and lets the ending writes land. */
export async function settleEverywhere(rpc: RpcClient, workers: WorkerList, targets: WireTarget[], except?: Worker): Promise<void> {
  const silent = await askEach(rpc, workers().filter((w) => w !== except), 'settle', { targets }, SETTLE_BOUND_MS);
  logSilent(`writes not settled within ${SETTLE_BOUND_MS} ms`, silent, { targets: targets.map((t) => `${t.vhost}${t.prefix}`) });
}

/** The other workers' part of a worker's invalidation; the worker answers its client after `done`. */
export function peerPart(rpc: RpcClient, workers: WorkerList, from: Worker, m: Extract<WorkerMessage, { type: 'invalidated' | 'settle-all' }>): void {
  const work = m.type === 'invalidated'
    ? dropMemoryEverywhere(rpc, workers, m.items, from)
    : settleEverywhere(rpc, workers, m.targets, from);
  void work.then(() => { if (from.isConnected()) from.send({ type: 'done', id: m.id }); });
}
