// Builds the primary's Fleet: its logs (info log, and the system log for errors), and how a bus
// entry runs here: as a management command would, on the workers whose cache is open (at start
// none is ready yet: the catch-up runs before they get their listening sockets).
import os from 'node:os';
import type { Worker } from 'node:cluster';
import type { SettingLifecycle } from '../../lifecycle/index.js';
import type { RpcClient } from '../../ipc/rpc.js';
import { systemLog } from '../../log/system-log.js';
import type { Setting } from '../../setting/types.js';
import { InvalidationService } from '../invalidation-service.js';
import { WorkerBridge } from '../rt-bridge.js';
import { PRODUCT_VERSION } from '../../version.js';
import { Fleet } from './fleet.js';

export interface FleetWiring {
  setting(): Setting;
  settingText(): string;
  apiHost(): string | undefined;
  lifecycle: SettingLifecycle;
  bridge: WorkerBridge;
  rpc: RpcClient;
  /** Live workers, or at start those whose cache is open. */
  cacheWorkers(): Worker[];
  connectedWorkers(): Worker[];
}

export function fleetOf(w: FleetWiring): Fleet {
  const bridge = new WorkerBridge({ liveWorkers: w.cacheWorkers, connectedWorkers: w.connectedWorkers, setting: w.setting }, w.rpc);
  const invalidation = new InvalidationService(bridge, w.setting);
  const info = (message: string, fields: Record<string, unknown>): void => { void w.lifecycle.events.info(message, fields).catch(() => undefined); };
  return new Fleet({
    setting: w.setting, settingText: w.settingText, apiHost: w.apiHost,
    name: os.hostname(), version: PRODUCT_VERSION,
    apply: async (e) => {
      const targets = e.targets.flatMap((t) => (t.tag === undefined ? invalidation.targetOf(t.text, t.vhost) : invalidation.tagTargets([t.tag], t.vhost)));
      await invalidation.run(e.kind, targets, e.sec);
    },
    info: (message, fields) => { systemLog.info(fields, message); info(message, fields); },
    error: (message, fields) => { systemLog.error(fields, message); info(message, fields); },
  });
}
