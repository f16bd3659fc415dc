// Invalidation commands as the primary runs them: parse the targets (hosts by name or alias,
// the most recently used host for targets without one), apply `purge.purge2expire`, and have one
// worker change the shared index; every worker drops its memory copies before the answer.
//
// A call may name any number of targets (a purge of 100,000 URLs is one POST): they are parsed
// and run SLICE at a time, each slice a turn of the primary's event loop at most, so the
// management API and the bus go on answering while a large invalidation runs.
import { effectiveKind, type PurgeSettings } from '../cache/commands/purge-mode.js';
import { addOutcome, invalidate, type InvalidationOutcome, type InvalidationSides } from '../cache/commands/invalidation-path.js';
import { parsePieces, tagTargets, urlPieces, type Target } from '../cache/commands/targets.js';
import { codedError } from '../errors/codes.js';
import { splitTags, tagProblem } from '../cache/tags.js';
import type { InvalidateKind } from '../cache/commands/invalidate.js';
import { toWire } from '../ipc/wire.js';
import { VhostTable } from '../routing/vhost-table.js';
import { resolveHosts } from '../setting/resolve.js';
import type { Setting } from '../setting/types.js';
import type { WorkerBridge } from './rt-bridge.js';
import type { RecognizedInvalidation } from '../manager/types.js';
import { compileKeyRule, keyTargets, type KeyRule } from '../cache/key.js';
import { withEditTargets } from '../pagedesk/targets.js';

const NO_KEY_RULE = { rule: undefined, post: false };

/**
 * Targets parsed or run per slice. A slice of 1,000 is a few milliseconds of the primary's time
 * and one IPC message of about 100 KB per worker; a whole call of 100,000 in one piece held the
 * event loop for over 100 ms in parsing alone.
 */
const SLICE = 1000;
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

export class InvalidationService {
  private lastHost: string | undefined;
  private tableFor: Setting | undefined;
  private table: VhostTable<{ name: string; enable: boolean; aliases: string[]; listen: null }> | undefined;
  private purgeFor: Setting | undefined;
  private purge = new Map<string, PurgeSettings>();

  constructor(private readonly bridge: WorkerBridge, private readonly setting: () => Setting) {}

  private knownHost = (name: string): string | undefined => {
    const s = this.setting();
    if (this.tableFor !== s) {
      this.table = new VhostTable(s.hosting.filter((h) => h.enable !== false).map((h) => ({ name: h.name, enable: true, aliases: h.aliases ?? [], listen: null })));
      this.tableFor = s;
    }
    return this.table!.route(name, undefined)?.name;
  };

  private purgeSettings = (vhost: string): PurgeSettings | undefined => {
    const s = this.setting();
    if (this.purgeFor !== s) {
      this.purge = new Map(resolveHosts(s).map((h) => [h.name, h.functions.network.cache.purge]));
      this.purgeFor = s;
    }
    return this.purge.get(vhost);
  };

  private keysFor: Setting | undefined;
  private keys = new Map<string, { rule: KeyRule | undefined; post: boolean }>();

  /** Each host's cache key rule (cachingKey), as its workers compile it. */
  private keyOf = (vhost: string): { rule: KeyRule | undefined; post: boolean } => {
    const s = this.setting();
    if (this.keysFor !== s) {
      this.keys = new Map(resolveHosts(s).map((h) => {
        const ck = h.functions.network.cache.cachingKey;
        return [h.name, { rule: compileKeyRule(ck), post: ck.postMethod.enable }];
      }));
      this.keysFor = s;
    }
    return this.keys.get(vhost) ?? NO_KEY_RULE;
  };

  /**
   * Parses `url` into the targets as cache keys (a host's cachingKey applies, so the URL as a
   * client writes it reaches what was stored for it), SLICE pieces per turn of the event loop;
   * throws BAD_TARGET or TARGET_UNKNOWN_HOST (lib/errors/codes.ts) for a bad or unknown target.
   */
  async targets(url: string | null): Promise<Target[]> {
    const pieces = urlPieces(url);
    const out: Target[] = [];
    let current = this.lastHost;
    for (let i = 0; i < pieces.length; i += SLICE) {
      if (i > 0) await nextTurn();
      const slice = parsePieces(pieces.slice(i, i + SLICE), this.knownHost, current);
      current = slice.current;
      for (const t of withEditTargets(keyTargets(slice.targets, this.keyOf), this.keywordOf)) out.push(t);
    }
    if (out.length === 0) throw codedError('BAD_TARGET', 'url names no target');
    this.lastHost = current;
    return out;
  }

  private keywordsFor: Setting | undefined;
  private keywords = new Map<string, string>();

  /** A host's pagedesk keyword when pagedesk is on: its edits go with their sources. */
  private keywordOf = (vhost: string): string | undefined => {
    const s = this.setting();
    if (this.keywordsFor !== s) {
      this.keywords = new Map(resolveHosts(s).filter((h) => h.functions.contents.pagedesk.meta.enable)
        .map((h) => [h.name, h.functions.contents.pagedesk.meta.keyword]));
      this.keywordsFor = s;
    }
    return this.keywords.get(vhost);
  };

  /**
   * One target as the bus carries it (`text` as given, `vhost` the host it was resolved to where
   * it was received); does not change the most recently used host. The text is one piece, never
   * split at `|`: an entry's bound on its targets holds whatever a target's text holds.
   */
  targetOf(text: string, vhost: string): Target[] {
    const { targets } = parsePieces([text], this.knownHost, vhost);
    if (targets.length === 0) throw codedError('BAD_TARGET', 'url names no target');
    return withEditTargets(keyTargets(targets, this.keyOf), this.keywordOf);
  }

  /**
   * The targets of `tags` (each split at spaces and commas) on the host `vhost` names (a name or
   * an alias), or on every enabled host; throws BAD_TARGET (400) for a bad tag, TARGET_UNKNOWN_HOST (502) for an unknown host.
   */
  tagTargets(tags: readonly string[], vhost: string | undefined): Target[] {
    const split = tags.flatMap((t) => { const s = splitTags(t); return s.length === 0 ? [''] : s; });
    const problem = tagProblem(split);
    if (problem !== undefined) throw codedError('BAD_TARGET', problem);
    let hosts: string[];
    if (vhost === undefined) hosts = this.setting().hosting.filter((h) => h.enable !== false).map((h) => h.name);
    else {
      const name = this.knownHost(vhost.toLowerCase());
      if (name === undefined) throw codedError('TARGET_UNKNOWN_HOST', vhost);
      hosts = [name];
    }
    return tagTargets([...new Set(split)], hosts);
  }

  /** Fleet hooks (propagation, bus): each API call accepted here, before it runs. */
  recognized?: (call: RecognizedInvalidation) => void;

  /** The command the target really gets after purge.purge2expire (also what pre-cache control applies). */
  kindFor(kind: InvalidateKind, t: Target): InvalidateKind {
    return effectiveKind(kind, t, this.purgeSettings(t.vhost)?.purge2expire ?? 'NONE');
  }

  /**
   * Runs a command through the node's one invalidation path (lib/cache/commands/invalidation-path),
   * SLICE targets at a time. `before`: only copies cached before then (a queued command, see
   * AsyncInvalidationQueue). A purge does nothing for a host whose every origin address is
   * excluded in every live worker: no worker could fetch the object again.
   */
  async run(kind: InvalidateKind, targets: Target[], sec?: number, before?: number): Promise<InvalidationOutcome> {
    let total: InvalidationOutcome = { kind, result: { Count: 0, Size: 0, Time: 0 }, status: 200 };
    for (let i = 0; i < targets.length; i += SLICE) {
      if (i > 0) await nextTurn();
      total = addOutcome(total, await invalidate(kind, targets.slice(i, i + SLICE), this.sides(sec, before), this.purgeSettings));
    }
    return total;
  }

  /** The steps as the primary takes them: each over RPC, the index change by one worker. */
  private sides(sec: number | undefined, before: number | undefined): InvalidationSides {
    return {
      settle: (targets) => this.bridge.settle(targets.map(toWire)),
      apply: async (k, list) => {
        const excluded = k === 'purge' ? await this.bridge.excludedEverywhere([...new Set(list.map((t) => t.vhost))]) : [];
        return this.bridge.call('invalidate', { kind: k, targets: list.map(toWire), sec, before, excluded });
      },
      dropMemory: (items) => this.bridge.dropMemory(items),
    };
  }

  fileinfo(vhost: string, url: string): Promise<Record<string, unknown>[]> {
    return this.bridge.call('fileinfo', { vhost, url });
  }
}
