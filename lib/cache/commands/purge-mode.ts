// `purge.purge2expire` and `purge.resCodeNoCtrlTarget` of a host, shared by the management API
// commands (run in the primary), pre-cache control of the asynchronous queue, and the PURGE
// method on the service port, so all three treat the same target the same way.
import type { InvalidateKind } from './invalidate.js';
import type { Target } from './targets.js';

export type Purge2Expire = 'NONE' | 'ROOT' | 'PATTERN' | 'ALL';

export interface PurgeSettings { purge2expire: Purge2Expire; resCodeNoCtrlTarget: number }

/**
 * The command a target really gets. ROOT: a purge of the whole site (`host/` or `host/*`, not a
 * pattern such as `host/*.jpg`) becomes expire; PATTERN: every wildcard or tag purge; ALL: every purge.
 */
export function effectiveKind(kind: InvalidateKind, t: Target, mode: Purge2Expire): InvalidateKind {
  if (kind !== 'purge') return kind;
  switch (mode) {
    case 'ALL': return 'expire';
    // A tag names many objects as a pattern does.
    case 'PATTERN': return t.wildcard || t.tag !== undefined ? 'expire' : 'purge';
    case 'ROOT': return t.prefix === '/' && t.match === undefined ? 'expire' : 'purge';
    default: return 'purge';
  }
}

/**
 * HTTP status of a command whose targets matched nothing: the first host (in target order) that
 * sets a code other than 200, since a host asking for a distinct code wants to be told.
 */
export function noTargetStatus(targets: readonly Target[], settingsOf: (vhost: string) => PurgeSettings | undefined): number {
  for (const t of targets) {
    const code = settingsOf(t.vhost)?.resCodeNoCtrlTarget ?? 200;
    if (code !== 200) return code;
  }
  return 200;
}
