// Pre-cache control: the asynchronous commands still waiting in the primary's queue, as this
// worker last heard of them. The lookup step treats content they name as if they had run
// (purged: fetched anew, expired: revalidated); this table answers "which command names it".
//
// One command may name 100,000 URLs: the table is built in one pass (linear in the entries) and
// indexed so that a request costs one map lookup for exact URLs plus a scan of the wildcard and
// tag entries only, never a scan of every URL waiting.
import type { InvalidateKind } from '../../cache/commands/invalidate.js';
import type { Target } from '../../cache/commands/targets.js';
import type { CachedObject } from '../../cache/store.js';

export interface PrectrlEntry { vhost: string; kind: InvalidateKind; target: Target; queuedAt: number }

const entryId = (e: PrectrlEntry): string => `${e.vhost}\n${e.kind}\n${e.queuedAt}\n${e.target.tag === undefined ? e.target.prefix : `\u0000${e.target.tag}`}`;

/** One host's waiting entries, each with its place in the queue (the first one naming a URL wins). */
interface HostTable {
  /** Exact URL targets: the first entry naming each URL. */
  exact: Map<string, { e: PrectrlEntry; at: number }>;
  /** Wildcard targets, in queue order. */
  wildcards: { e: PrectrlEntry; at: number }[];
  /** Tag targets, in queue order. */
  tags: PrectrlEntry[];
}

export class QueuedCommands {
  private byHost = new Map<string, HostTable>();
  private ids = new Set<string>();

  /** Hosts with a command waiting: none is the common case, checked once per lookup. */
  get size(): number {
    return this.byHost.size;
  }

  /** The primary's new list; `arrived` hears each command this worker had not heard of yet. */
  set(entries: PrectrlEntry[], arrived: (e: PrectrlEntry) => void): void {
    const known = this.ids;
    const ids = new Set<string>();
    const next = new Map<string, HostTable>();
    for (let at = 0; at < entries.length; at++) {
      const e = entries[at]!;
      let table = next.get(e.vhost);
      if (table === undefined) { table = { exact: new Map(), wildcards: [], tags: [] }; next.set(e.vhost, table); }
      const t = e.target;
      if (t.tag !== undefined) table.tags.push(e);
      else if (t.wildcard) table.wildcards.push({ e, at });
      else if (!table.exact.has(t.prefix)) table.exact.set(t.prefix, { e, at });
      const id = entryId(e);
      ids.add(id);
      if (!known.has(id)) arrived(e);
    }
    this.byHost = next;
    this.ids = ids;
  }

  /** The first waiting command whose URL target names this URL, if any. */
  naming(vhost: string, url: string): PrectrlEntry | undefined {
    const table = this.byHost.get(vhost);
    if (table === undefined) return undefined;
    let best = table.exact.get(url);
    for (const w of table.wildcards) {
      if (best !== undefined && best.at < w.at) break;
      const t = w.e.target;
      if (url.startsWith(t.prefix) && (t.match === undefined || t.match.test(url))) { best = w; break; }
    }
    return best?.e;
  }

  /** A waiting tag command that names this copy (cached before it was queued), if any. */
  tagging(obj: CachedObject): PrectrlEntry | undefined {
    const tags = obj.tags;
    if (tags === undefined) return undefined;
    for (const e of this.byHost.get(obj.key.vhost)?.tags ?? []) {
      if (obj.cachedAt < e.queuedAt && tags.includes(e.target.tag!)) return e;
    }
    return undefined;
  }
}
