// The worker's pagedesk: one pool of edit threads for all its hosts, and the source of an edit
// asked from the node's cache (the source URL's owner worker over the sibling port, this worker
// itself in round-robin balance), so the source is one cached object like any other URL.
import { EditPool } from '../pagedesk/pool.js';
import { PagedeskRuntime, type SourceFetch } from '../pagedesk/producer.js';
import type { HostRuntime } from '../pipeline/parts/host-runtime.js';

export class PagedeskWiring {
  private readonly pool = new EditPool();

  constructor(private readonly source: SourceFetch) {}

  /** Gives each host with pagedesk enabled its runtime (before facades copy the hosts). */
  attach(hosts: Iterable<HostRuntime>): void {
    for (const h of hosts) {
      const p = h.setting.functions.contents.pagedesk;
      h.pagedesk = p.meta.enable ? new PagedeskRuntime(p, h.name, this.source, this.pool) : undefined;
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
