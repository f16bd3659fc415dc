// IPC between the primary and the RT workers: control only (setting, ring, drain), never
// per-request traffic.
import type { Setting } from '../setting/types.js';

/**
 * The environment variable a worker gets the primary's per-start secret of the sibling ports in
 * (set at fork, before any message: the worker needs it to open its internal port).
 */
export const SIBLING_SECRET_ENV = 'SVC_SIBLING_SECRET';

export type PrimaryMessage =
  /**
   * `changedHosts`: the hosts whose runtime (origin pool, health state) is rebuilt; the others
   * keep theirs (meta.setting.deploy `shared`). 'all' rebuilds every host (`exclusive`, start).
   */
  | { type: 'setting'; setting: Setting; baseDir: string; generation: number; changedHosts: string[] | 'all' }
  | { type: 'ring'; members: number[] }
  | { type: 'drain'; timeoutMs: number }
  | { type: 'rpc'; id: number; op: string; args: unknown };

export type WorkerMessage =
  | { type: 'hello' }
  | { type: 'ready'; generation: number }
  | { type: 'apply-error'; generation: number; message: string }
  /** Sent instead of `ready` when a listening socket of that generation could not be opened. */
  | { type: 'listen-error'; generation: number; errors: string[] }
  | { type: 'rpc-result'; id: number; ok: boolean; result?: unknown; error?: string; code?: string };
