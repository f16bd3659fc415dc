// IPC between the supervisor (lib/supervisor) and a primary it started. The supervisor holds the
// listening sockets and runs the hand-over of a restart:
//   old primary: restart -> supervisor starts a new primary (SVC_HANDOVER=1)
//   new primary: serving (its workers accept) -> supervisor: handover -> old primary answers its
//   caller, closes its management and statistics ports: released -> supervisor: bind -> new
//   primary opens them: started; the old primary drains its workers and exits.

/** The environment variable that starts a primary as the new half of a restart. */
export const HANDOVER_ENV = 'SVC_HANDOVER';
/** The svc.js the supervisor forks primaries from, as the operator named it (an install switches its `current` link). */
export const ENTRY_ENV = 'SVC_ENTRY';
/** When the supervisor (the node, as systemd sees it) started, epoch ms: the uptime `svc status` shows. */
export const NODE_STARTED_ENV = 'SVC_NODE_STARTED';

export type ToSupervisor =
  /** A worker of this primary (`owner` = pid/worker id) wants the socket of host:port. */
  | { type: 'listen'; id: number; owner: string; host: string | null; port: number }
  | { type: 'unlisten'; owner: string; key: string }
  /** Every socket of the owners starting with `prefix` (a worker that exited). */
  | { type: 'unlisten-all'; prefix: string }
  /** The management API asked for a restart (the old primary). */
  | { type: 'restart' }
  /** The management API asked for a stop: the supervisor exits 0 once this primary has. */
  | { type: 'stop' }
  /** New primary: its workers accept on every socket; the management ports wait for `bind`. */
  | { type: 'serving' }
  /** Old primary: its management and statistics ports are closed. */
  | { type: 'released' }
  /** New primary: fully started (management ports open). */
  | { type: 'started' }
  /** A primary that cannot start says why before it exits. */
  | { type: 'start-failed'; reason: string };

export type FromSupervisor =
  /** Answer to `listen`; the handle travels with the message unless `error` is set. */
  | { type: 'listen-result'; id: number; error?: string }
  /** Old primary: the new one serves; answer the restart, close the management ports, say `released`. */
  | { type: 'handover' }
  /** Old primary: the new primary failed to start; it keeps serving. */
  | { type: 'restart-failed'; reason: string }
  /** New primary: open the management and statistics ports now. */
  | { type: 'bind' };
