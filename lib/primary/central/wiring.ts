// Central management as the primary runs it: purges through the API's invalidation service,
// run-time origin addresses to every worker (and to each new worker before its first setting),
// outbound calls in the info log.
import type { Worker } from 'node:cluster';
import type { PrimaryMessage } from '../../ipc/messages.js';
import type { SettingLifecycle } from '../../lifecycle/index.js';
import type { Setting } from '../../setting/types.js';
import { resolveHosts } from '../../setting/resolve.js';
import type { InvalidationService } from '../invalidation-service.js';
import type { SecretKey } from '../../license/secret-box.js';
import { Central } from './central.js';

interface CentralHost {
  setting: () => Setting;
  lifecycle: SettingLifecycle;
  invalidation: InvalidationService;
  workers: () => Worker[];
  licenseId: () => string;
  secretKey: () => SecretKey | undefined;
  productVer: string;
}

export class CentralLink {
  private addresses: Record<string, string[]> = {};
  readonly central: Central;

  constructor(h: CentralHost) {
    this.central = new Central({
      server: h.setting().env.management.server,
      lifecycle: h.lifecycle,
      productVer: h.productVer,
      licenseId: h.licenseId,
      secretKey: h.secretKey,
      log: (message, fields) => void h.lifecycle.events.info(message, fields),
      purge: async (what) => {
        const targets = 'url' in what ? await h.invalidation.targets(what.url) : h.invalidation.tagTargets([what.tag], what.vhost);
        const o = await h.invalidation.run('purge', targets);
        return { count: o.result.Count, size: o.result.Size, time: o.result.Time };
      },
      origins: {
        // The resolved host: its origin may come from a basehost.
        configured: (name) => {
          const host = resolveHosts(h.setting()).find((x) => x.name === name);
          return host === undefined ? undefined : { address: host.origin.address[0], protocol: host.origin.protocol };
        },
        apply: (hosts) => {
          this.addresses = hosts;
          for (const w of h.workers()) this.send(w);
        },
      },
    });
  }

  /** A new worker gets the run-time addresses before its first setting. */
  send(worker: Worker): void {
    const m: PrimaryMessage = { type: 'origin-address', hosts: this.addresses };
    if (worker.isConnected()) worker.send(m);
  }
}
