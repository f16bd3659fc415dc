// Origin addresses given at run time by the primary (features.nodelist, lib/primary/central):
// they replace `origin.address` of the named hosts in every setting this worker builds, until the
// primary sends other ones. setting.json is never changed by them.
import type { ResolvedHost } from '../setting/types.js';

export class OriginOverrides {
  private byHost = new Map<string, string[]>();

  /** Takes the new addresses; returns the hosts whose addresses changed. */
  set(hosts: Record<string, string[]>): string[] {
    const changed = Object.entries(hosts).filter(([name, list]) => this.byHost.get(name)?.join(' ') !== list.join(' ')).map(([name]) => name);
    for (const name of this.byHost.keys()) if (!(name in hosts)) changed.push(name);
    this.byHost = new Map(Object.entries(hosts));
    return changed;
  }

  applyTo(hosts: ResolvedHost[]): ResolvedHost[] {
    if (this.byHost.size === 0) return hosts;
    return hosts.map((h) => {
      const address = this.byHost.get(h.name);
      return address === undefined ? h : { ...h, origin: { ...h.origin, address } };
    });
  }
}
