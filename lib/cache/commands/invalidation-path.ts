// The one invalidation path of the node. The management API (and through it the central feed,
// propagation and the invalidation bus, which all run API calls) and the PURGE method on the
// service port take the same steps in the same order, so a target is treated the same whichever
// way it arrives; only who does each step differs (the primary over RPC to its workers, or the
// worker that received a PURGE and its peers), and that is the caller's `InvalidationSides`:
//
//   1. each target gets its effective command (purge.purge2expire of its host);
//   2. every worker's fetches under the targets retire and the writes already ending land
//      (nothing requested before the command may land after it);
//   3. one worker changes the shared index, one call per effective command;
//   4. every worker drops its memory copies of what the targets name, before the answer;
//   5. the status: purge.resCodeNoCtrlTarget when nothing matched.
//
// Once step 4 is done no worker holds or can still store an old copy, which is what lets the
// caller answer: a request that starts after the answer never gets one.
import { effectiveKind, noTargetStatus, type PurgeSettings } from './purge-mode.js';
import { memoryItems, type InvalidateKind, type InvalidateResult, type Invalidation } from './invalidate.js';
import type { Target } from './targets.js';

export interface InvalidationSides {
  /** Step 2, over every worker of the node. */
  settle(targets: Target[]): Promise<void>;
  /** Step 3: the index change of one effective command, by one worker. */
  apply(kind: InvalidateKind, targets: Target[]): Promise<InvalidateResult>;
  /** Step 4, over every worker of the node. */
  dropMemory(items: Invalidation[]): Promise<void>;
}

export interface InvalidationOutcome { kind: InvalidateKind; result: InvalidateResult; /** HTTP status: purge.resCodeNoCtrlTarget when nothing matched. */ status: number }

/** The targets grouped by the command each really gets (step 1), in first-seen order. */
function byEffectiveKind(kind: InvalidateKind, targets: readonly Target[],
  settingsOf: (vhost: string) => PurgeSettings | undefined): Map<InvalidateKind, Target[]> {
  const groups = new Map<InvalidateKind, Target[]>();
  for (const t of targets) {
    const k = effectiveKind(kind, t, settingsOf(t.vhost)?.purge2expire ?? 'NONE');
    const list = groups.get(k);
    if (list === undefined) groups.set(k, [t]);
    else list.push(t);
  }
  return groups;
}

/** Runs one command over `targets` (steps 1 to 5). */
export async function invalidate(kind: InvalidateKind, targets: Target[], sides: InvalidationSides,
  settingsOf: (vhost: string) => PurgeSettings | undefined): Promise<InvalidationOutcome> {
  const groups = byEffectiveKind(kind, targets, settingsOf);
  await sides.settle(targets);
  const result: InvalidateResult = { Count: 0, Size: 0, Time: 0 };
  for (const [k, list] of groups) {
    const r = await sides.apply(k, list);
    result.Count += r.Count; result.Size += r.Size; result.Time += r.Time;
  }
  await sides.dropMemory(memoryItems(targets));
  return { kind, result, status: result.Count === 0 ? noTargetStatus(targets, settingsOf) : 200 };
}

/** Sums the outcomes of the slices of one call (a long call runs a slice at a time). */
export function addOutcome(total: InvalidationOutcome, part: InvalidationOutcome): InvalidationOutcome {
  const result = { Count: total.result.Count + part.result.Count, Size: total.result.Size + part.result.Size, Time: total.result.Time + part.result.Time };
  // A slice that matched something makes the call a match; else the first non-200 code stands.
  const status = result.Count > 0 ? 200 : total.status !== 200 ? total.status : part.status;
  return { kind: total.kind, result, status };
}
