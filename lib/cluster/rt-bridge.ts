// The primary's view of the RT workers for the management API: which are up, and commands sent
// to them over IPC. Origin health is per worker (each has its own connections); the first live
// worker's view is reported, and a reset goes to every worker.
import type { Worker } from 'node:cluster';
import { RtBridgeError, type OriginStatus, type RtBridge } from '../manager/index.js';
import type { Setting } from '../setting/types.js';
import { RpcError, type RpcClient } from './rpc.js';

export interface WorkerSource {
  liveWorkers(): Worker[];
  setting(): Setting;
}

export class WorkerBridge implements RtBridge {
  constructor(private readonly src: WorkerSource, private readonly rpc: RpcClient) {}

  running(): boolean {
    return this.src.liveWorkers().length > 0;
  }

  vhosts(): string[] {
    return this.src.setting().hosting.filter((h) => h.enable !== false).map((h) => h.name);
  }

  /** Any live worker (commands on the shared index need only one). */
  one(): Worker {
    const w = this.src.liveWorkers()[0];
    if (w === undefined) throw new RtBridgeError('RT_NOT_RUNNING', 'RT not running');
    return w;
  }

  async call<T>(op: string, args: unknown, worker: Worker = this.one()): Promise<T> {
    try {
      return await this.rpc.call<T>(worker, op, args);
    } catch (err) {
      if (err instanceof RpcError && (err.code === 'RT_NOT_RUNNING' || err.code === 'VHOST_NOT_FOUND')) throw new RtBridgeError(err.code, err.message);
      throw err;
    }
  }

  originStatus(vhost?: string): Promise<OriginStatus[]> {
    return this.call<OriginStatus[]>('origin-status', { vhost });
  }

  /** Sends a command to every live worker. */
  async broadcast(op: string, args: unknown): Promise<void> {
    await Promise.all(this.src.liveWorkers().map((w) => this.call(op, args, w)));
  }

  async resetOrigin(vhost?: string): Promise<void> {
    const workers = this.src.liveWorkers();
    if (workers.length === 0) throw new RtBridgeError('RT_NOT_RUNNING', 'RT not running');
    await Promise.all(workers.map((w) => this.call('reset-origin', { vhost }, w)));
  }
}
