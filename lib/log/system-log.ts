// The process's own operational log (start, stop, worker lifecycle, reload results) as JSON lines
// on stdout, where systemd or a container runtime collects them. The spec's info/watch/error
// files are written by the log module on top of this.
//
// Every line names the process that wrote it (`role`) once. pino writes a child's bindings after
// the base ones without merging them, so a child binding `role` beside a base `role` gave lines
// with the key twice, which JSON readers resolve differently (jq keeps the last, others the
// first or refuse the line). The role is therefore not a binding: it is added per line by a
// mixin, from the one place a process says what it is (setLogRole).
import { pino } from 'pino';

let role = process.env.SVC_WORKER_INDEX === undefined ? 'primary' : `worker-${process.env.SVC_WORKER_INDEX}`;

/** The role every later line of this process carries (`supervisor` for `svc start`'s own process). */
export function setLogRole(r: string): void {
  role = r;
}

export const systemLog = pino({
  level: process.env.SVC_LOG_LEVEL ?? 'info',
  base: { pid: process.pid },
  mixin: () => ({ role }),
  timestamp: pino.stdTimeFunctions.isoTime,
});
