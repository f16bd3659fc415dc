// IPC between the primary and the RT workers: control only (setting, ring, drain), never
// per-request traffic.
import type { Setting } from '../setting/types.js';

export type PrimaryMessage =
  | { type: 'setting'; setting: Setting; baseDir: string; generation: number }
  | { type: 'ring'; members: number[] }
  | { type: 'drain'; timeoutMs: number }
  | { type: 'rpc'; id: number; op: string; args: unknown };

export type WorkerMessage =
  | { type: 'hello' }
  | { type: 'ready'; generation: number }
  | { type: 'apply-error'; generation: number; message: string }
  | { type: 'listen-error'; errors: string[] }
  | { type: 'rpc-result'; id: number; ok: boolean; result?: unknown; error?: string; code?: string };
