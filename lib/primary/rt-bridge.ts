// The primary's view of the RT workers for the management API: which are up, and commands sent
// to them over IPC. Origin health is per worker (each has its own connections and failure
// counts), so origin queries ask every live worker and merge; commands on the shared index go to
// one worker only.
import type { Worker } from 'node:cluster';
import { codedError } from '../errors/codes.js';
import type { OriginState, OriginStatus, RtBridge } from '../manager/index.js';
import type { Setting } from '../setting/types.js';
import type { Invalidation } from '../cache/commands/invalidate.js';
import type { RpcArgs, RpcOp, RpcResult } from '../ipc/messages.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { WireTarget } from '../ipc/wire.js';
import { dropMemoryEverywhere, settleEverywhere } from './peer-invalidation.js';

export interface WorkerSource {
  liveWorkers(): Worker[];
  /** Every worker process still connected, ready or not (starting and draining ones serve too). */
  connectedWorkers(): Worker[];
  setting(): Setting;
}

type Pairs<V> = Array<Record<string, V>>;

/** Per key: Inactive if any worker has it Inactive (an operator must see a partial failure). */
function mergeStates(lists: Pairs<OriginState>[]): Pairs<OriginState> {
  const out = new Map<string, OriginState>();
  for (const list of lists) {
    for (const item of list) {
      for (const [k, v] of Object.entries(item)) if (out.get(k) !== 'Inactive') out.set(k, v);
    }
  }
  return [...out].map(([k, v]) => ({ [k]: v }));
}

/**
 * One host's status from every worker's: an address or IP Inactive in any worker is Inactive
 * (with the longest TTL among those workers); an IP Active everywhere keeps the shortest TTL.
 */
export function mergeOriginStatus(views: OriginStatus[]): OriginStatus {
  const inactive = new Map<string, number>();
  const active = new Map<string, number>();
  for (const v of views) {
    for (const item of v.InactiveIP) for (const [ip, ttl] of Object.entries(item)) inactive.set(ip, Math.max(ttl, inactive.get(ip) ?? 0));
  }
  for (const v of views) {
    for (const item of v.ActiveIP) {
      for (const [ip, ttl] of Object.entries(item)) if (!inactive.has(ip)) active.set(ip, Math.min(ttl, active.get(ip) ?? Infinity));
    }
  }
  return {
    VirtualHost: views[0]!.VirtualHost,
    Address: mergeStates(views.map((v) => v.Address)),
    Address2: mergeStates(views.map((v) => v.Address2)),
    ActiveIP: [...active].map(([ip, ttl]) => ({ [ip]: ttl })),
    InactiveIP: [...inactive].map(([ip, ttl]) => ({ [ip]: ttl })),
  };
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
    if (w === undefined) throw codedError('RT_NOT_RUNNING');
    return w;
  }

  /** Rejects with the worker's error; one of lib/errors/codes.ts (RT_NOT_RUNNING, VHOST_NOT_FOUND) as that code. */
  async call<K extends RpcOp>(op: K, args: RpcArgs<K>, worker: Worker = this.one()): Promise<RpcResult<K>> {
    return this.rpc.call(worker, op, args);
  }

  /** The answer of every live worker (RT not running when there is none). */
  async callAll<K extends RpcOp>(op: K, args: RpcArgs<K>): Promise<RpcResult<K>[]> {
    const workers = this.src.liveWorkers();
    if (workers.length === 0) throw codedError('RT_NOT_RUNNING');
    return Promise.all(workers.map((w) => this.call(op, args, w)));
  }

  /** Origin status merged over every worker, one item per host in setting order. */
  async originStatus(vhost?: string): Promise<OriginStatus[]> {
    const views = await this.callAll('origin-status', { vhost });
    const byHost = new Map<string, OriginStatus[]>();
    for (const list of views) for (const s of list) byHost.set(s.VirtualHost, [...(byHost.get(s.VirtualHost) ?? []), s]);
    return [...byHost.values()].map(mergeOriginStatus);
  }

  /** Hosts (of those given) whose every origin address is excluded in every live worker. */
  async excludedEverywhere(vhosts: string[]): Promise<string[]> {
    if (vhosts.length === 0) return [];
    const views = await this.callAll('all-excluded', { vhosts });
    return vhosts.filter((h) => views.every((list) => list.includes(h)));
  }

  /** Sends a command to every live worker. */
  async broadcast<K extends RpcOp>(op: K, args: RpcArgs<K>): Promise<void> {
    await Promise.all(this.src.liveWorkers().map((w) => this.call(op, args, w)));
  }

  /** Every worker's fetches under the targets retire; those already being written have landed. */
  settle(targets: WireTarget[]): Promise<void> {
    return settleEverywhere(this.rpc, () => this.src.connectedWorkers(), targets);
  }

  /** Every worker's memory copies of what an invalidation named are gone (bounded, see peer-invalidation.ts). */
  dropMemory(items: Invalidation[]): Promise<void> {
    return dropMemoryEverywhere(this.rpc, () => this.src.connectedWorkers(), items);
  }

  async resetOrigin(vhost?: string): Promise<void> {
    await this.callAll('reset-origin', { vhost });
  }
}
