// The process's own operational log (start, stop, worker lifecycle, reload results) as JSON lines
// on stdout, where systemd or a container runtime collects them. The spec's info/watch/error
// files are written by the log module on top of this.
import { pino } from 'pino';

export const systemLog = pino({
  level: process.env.SVC_LOG_LEVEL ?? 'info',
  base: { pid: process.pid, role: process.env.SVC_WORKER_INDEX === undefined ? 'primary' : `worker-${process.env.SVC_WORKER_INDEX}` },
  timestamp: pino.stdTimeFunctions.isoTime,
});
