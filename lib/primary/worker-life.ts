// One RT worker process as the primary sees it, from fork to exit: starting (forked, not yet
// serving), ready (serving, on the hash ring), draining (replaced: finishes what it has, follows
// the ring, leaves) and dead (exited). Before this module a slot's state was three fields
// (`worker`, `ready`, `startedAt`) and a separate `retiring` set, kept in step by hand in four
// places; now every change of state is one call to `to()`, checked against the one table below.
//
// A transition the table does not allow is a programming error: it is logged with the worker,
// both states and the transition asked for, and refused (the state stays), never taken
// silently. It is not thrown: the callers are cluster event handlers, where a throw would take
// the primary down with every worker.
import type { Worker } from 'node:cluster';
import { systemLog } from '../log/system-log.js';

export type WorkerPhase = 'starting' | 'ready' | 'draining' | 'dead';

/** From each state, the states it may go to. */
const TRANSITIONS: Readonly<Record<WorkerPhase, readonly WorkerPhase[]>> = {
  // Its first `ready` message; or it exits (or fails) during its start.
  starting: ['ready', 'dead'],
  // A newer worker of its slot became ready (rolling restart); or it died.
  ready: ['draining', 'dead'],
  draining: ['dead'],
  dead: [],
};

/** Where an illegal transition is reported (the system log; tests read it). */
export type IllegalTransition = (detail: { slot: number; pid: number | undefined; from: WorkerPhase; to: WorkerPhase }) => void;

const logIllegal: IllegalTransition = (detail) => {
  systemLog.error(detail, 'illegal worker state transition refused (a bug in the primary)');
};

export class WorkerLife {
  private current: WorkerPhase = 'starting';
  /** When it was forked: a death soon after counts towards the back-off. */
  readonly startedAt = Date.now();

  constructor(readonly worker: Worker, readonly slot: number, private readonly illegal: IllegalTransition = logIllegal) {}

  get phase(): WorkerPhase {
    return this.current;
  }

  /** Moves to `next` when the table allows it; otherwise reports it and stays. True when moved. */
  to(next: WorkerPhase): boolean {
    if (!TRANSITIONS[this.current].includes(next)) {
      this.illegal({ slot: this.slot, pid: this.worker.process.pid, from: this.current, to: next });
      return false;
    }
    this.current = next;
    return true;
  }
}
