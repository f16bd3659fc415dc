// The worker's side of pre-cache control (lib/primary/prectrl-feed.ts sends it): the changes of
// the primary's queue of asynchronous commands, applied to the worker's table
// (lib/pipeline/parts/queued-commands.ts). The messages come from the primary, yet each is checked
// for its shape before anything changes: a malformed one is refused whole (the primary logs the
// error), never half applied.
import type { InvalidateKind } from '../cache/commands/invalidate.js';
import { PRECTRL_SLICE, type PrectrlWireEntry, type RpcOp } from '../ipc/messages.js';
import type { RpcHandlers } from '../ipc/rpc.js';
import { fromWire, type WireTarget } from '../ipc/wire.js';
import type { PrectrlEntry, QueuedCommands } from '../pipeline/parts/queued-commands.js';

const KINDS: ReadonlySet<unknown> = new Set<InvalidateKind>(['purge', 'expire', 'expireafter', 'hardpurge']);

const isString = (v: unknown): v is string => typeof v === 'string';
const optionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

function isWireTarget(v: unknown): v is WireTarget {
  if (typeof v !== 'object' || v === null) return false;
  const t = v as Record<string, unknown>;
  return isString(t.vhost) && isString(t.prefix) && typeof t.wildcard === 'boolean' && isString(t.text)
    && optionalString(t.pattern) && optionalString(t.flags) && optionalString(t.tag);
}

function isEntry(v: unknown): v is PrectrlWireEntry {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return isString(e.vhost) && KINDS.has(e.kind) && Number.isFinite(e.queuedAt) && isWireTarget(e.target) && e.target.vhost === e.vhost;
}

function commandId(v: unknown): number {
  if (!Number.isSafeInteger(v)) throw new Error('prectrl: the command id is not an integer');
  return v as number;
}

/** The entries of a `prectrl-add`, checked whole (a bad pattern throws here too). */
function entriesOf(v: unknown): PrectrlEntry[] {
  if (!Array.isArray(v) || v.length > PRECTRL_SLICE) throw new Error(`prectrl: entries must be a list of at most ${PRECTRL_SLICE}`);
  if (!v.every(isEntry)) throw new Error('prectrl: malformed entry');
  return v.map((e) => ({ vhost: e.vhost, kind: e.kind, target: fromWire(e.target), queuedAt: e.queuedAt }));
}

/**
 * `arrived`: a fetch under way of what a new entry names began before the command; its answer
 * is the content the command names, so nobody may join it (nor may it land fresh).
 */
export function prectrlHandlers(table: () => QueuedCommands, arrived: (e: PrectrlEntry) => void):
  RpcHandlers<Extract<RpcOp, `prectrl-${string}`>> {
  return {
    'prectrl-add': ({ id, entries }: { id: unknown; entries: unknown }) => {
      const checked = entriesOf(entries);
      table().add(commandId(id), checked, arrived);
      return null;
    },
    'prectrl-drop': ({ id }: { id: unknown }) => { table().drop(commandId(id)); return null; },
    'prectrl-clear': () => { table().clear(); return null; },
    'prectrl-host-off': ({ vhost }: { vhost: unknown }) => {
      if (!isString(vhost)) throw new Error('prectrl: vhost is not a string');
      table().hostOff(vhost);
      return null;
    },
  };
}
