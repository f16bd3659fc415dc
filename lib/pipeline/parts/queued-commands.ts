// Pre-cache control: the asynchronous commands still waiting in the primary's queue, as this
// worker last heard of them. The lookup step treats content they name as if they had run
// (purged: fetched anew, expired: revalidated); this table answers "which command names it".
//
// The primary sends changes, never the whole list (lib/primary/prectrl-feed.ts): a command's
// entries arrive under its id, in slices (one command may name 100,000 URLs), and the command
// leaves by its id once it ran. So the table is kept per command: a change touches only that
// command's tables. A request costs one host lookup and then, for each waiting command that names
// the host, one map lookup for exact URLs plus a scan of that command's wildcard (or tag)
// entries; never a scan of every URL waiting, nor any work when nothing waits.
import type { InvalidateKind } from '../../cache/commands/invalidate.js';
import type { Target } from '../../cache/commands/targets.js';
import type { CachedObject } from '../../cache/store.js';

export interface PrectrlEntry { vhost: string; kind: InvalidateKind; target: Target; queuedAt: number }

/** One command's entries of one host. */
interface HostTable {
  /** The command's id: its place in the queue (the primary numbers commands in queue order). */
  id: number;
  /** Exact URL targets: the first entry naming each URL. */
  exact: Map<string, PrectrlEntry>;
  /** Wildcard targets. */
  wildcards: PrectrlEntry[];
  /** Tag targets. */
  tags: PrectrlEntry[];
}

export class QueuedCommands {
  /** Per command id, its table of each host it names. */
  private readonly commands = new Map<number, Map<string, HostTable>>();
  /** Per host, the tables of the commands naming it, in queue order (the first one naming a URL wins). */
  private readonly byHost = new Map<string, HostTable[]>();

  /** Hosts with a command waiting: none is the common case, checked once per lookup. */
  get size(): number {
    return this.byHost.size;
  }

  /** More entries of command `id`; `arrived` hears each of them (fetches under way retire). */
  add(id: number, entries: PrectrlEntry[], arrived: (e: PrectrlEntry) => void): void {
    let hosts = this.commands.get(id);
    if (hosts === undefined) { hosts = new Map(); this.commands.set(id, hosts); }
    for (const e of entries) {
      let table = hosts.get(e.vhost);
      if (table === undefined) { table = this.tableOf(id, e.vhost); hosts.set(e.vhost, table); }
      const t = e.target;
      if (t.tag !== undefined) table.tags.push(e);
      else if (t.wildcard) table.wildcards.push(e);
      else if (!table.exact.has(t.prefix)) table.exact.set(t.prefix, e);
      arrived(e);
    }
  }

  /** Command `id` ran or was dropped: its entries no longer count. */
  drop(id: number): void {
    const hosts = this.commands.get(id);
    if (hosts === undefined) return;
    this.commands.delete(id);
    for (const [vhost, table] of hosts) {
      const list = this.byHost.get(vhost)!;
      list.splice(list.indexOf(table), 1);
      if (list.length === 0) this.byHost.delete(vhost);
    }
  }

  /** Every command is gone (the queue was reset). */
  clear(): void {
    this.commands.clear();
    this.byHost.clear();
  }

  /** Pre-cache control was reset for the host: the waiting commands' entries of it stop counting. */
  hostOff(vhost: string): void {
    for (const table of this.byHost.get(vhost) ?? []) this.commands.get(table.id)?.delete(vhost);
    this.byHost.delete(vhost);
  }

  /** The first waiting command whose URL target names this URL, if any. */
  naming(vhost: string, url: string): PrectrlEntry | undefined {
    for (const table of this.byHost.get(vhost) ?? []) {
      const hit = table.exact.get(url);
      if (hit !== undefined) return hit;
      for (const e of table.wildcards) {
        const t = e.target;
        if (url.startsWith(t.prefix) && (t.match === undefined || t.match.test(url))) return e;
      }
    }
    return undefined;
  }

  /** A waiting tag command that names this copy (cached before it was queued), if any. */
  tagging(obj: CachedObject): PrectrlEntry | undefined {
    const tags = obj.tags;
    if (tags === undefined) return undefined;
    for (const table of this.byHost.get(obj.key.vhost) ?? []) {
      for (const e of table.tags) if (obj.cachedAt < e.queuedAt && tags.includes(e.target.tag!)) return e;
    }
    return undefined;
  }

  /** A new table of command `id` for the host, placed in queue order among the host's others. */
  private tableOf(id: number, vhost: string): HostTable {
    const table: HostTable = { id, exact: new Map(), wildcards: [], tags: [] };
    let list = this.byHost.get(vhost);
    if (list === undefined) { list = []; this.byHost.set(vhost, list); }
    // New commands come last; a later id arriving first (never from one primary) is still placed right.
    let at = list.length;
    while (at > 0 && list[at - 1]!.id > id) at--;
    list.splice(at, 0, table);
    return table;
  }
}
