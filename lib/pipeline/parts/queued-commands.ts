// Pre-cache control: the asynchronous commands still waiting in the primary's queue, as this
// worker last heard of them. The lookup step treats content they name as if they had run
// (purged: fetched anew, expired: revalidated); this table answers "which command names it".
import type { InvalidateKind } from '../../cache/commands/invalidate.js';
import type { Target } from '../../cache/commands/targets.js';
import type { CachedObject } from '../../cache/store.js';

export interface PrectrlEntry { vhost: string; kind: InvalidateKind; target: Target; queuedAt: number }

const entryId = (e: PrectrlEntry): string => `${e.vhost}\n${e.kind}\n${e.queuedAt}\n${e.target.tag === undefined ? e.target.prefix : `\u0000${e.target.tag}`}`;

export class QueuedCommands {
  private byHost = new Map<string, PrectrlEntry[]>();

  /** Hosts with a command waiting: none is the common case, checked once per lookup. */
  get size(): number {
    return this.byHost.size;
  }

  /** The primary's new list; `arrived` hears each command this worker had not heard of yet. */
  set(entries: PrectrlEntry[], arrived: (e: PrectrlEntry) => void): void {
    const known = new Set<string>();
    for (const list of this.byHost.values()) for (const e of list) known.add(entryId(e));
    const next = new Map<string, PrectrlEntry[]>();
    for (const e of entries) {
      next.set(e.vhost, [...(next.get(e.vhost) ?? []), e]);
      if (!known.has(entryId(e))) arrived(e);
    }
    this.byHost = next;
  }

  /** The first waiting command whose URL target names this URL, if any. */
  naming(vhost: string, url: string): PrectrlEntry | undefined {
    const list = this.byHost.get(vhost);
    if (list === undefined) return undefined;
    for (const e of list) {
      const t = e.target;
      if (t.wildcard ? url.startsWith(t.prefix) && (t.match === undefined || t.match.test(url)) : url === t.prefix) return e;
    }
    return undefined;
  }

  /** A waiting tag command that names this copy (cached before it was queued), if any. */
  tagging(obj: CachedObject): PrectrlEntry | undefined {
    const tags = obj.tags;
    if (tags === undefined) return undefined;
    for (const e of this.byHost.get(obj.key.vhost) ?? []) {
      if (e.target.tag !== undefined && obj.cachedAt < e.queuedAt && tags.includes(e.target.tag)) return e;
    }
    return undefined;
  }
}
