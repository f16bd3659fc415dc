// The figures of each process of the node that Prometheus's conventional process metrics carry
// (`process_cpu_seconds_total`, `process_start_time_seconds`), read from /proc for the primary
// and every worker: one scrape of the primary shows them all, labelled by the role the system
// log gives each process (`primary`, `worker-<n>`). prom-client's defaults would describe only
// the process that answers the scrape. A worker replaced under the same role starts its counter
// again, which Prometheus's rate() reads as a counter reset.
import { readFileSync } from 'node:fs';

/** USER_HZ, the unit of /proc's times: 100 on every Linux ABI node runs on (node has no sysconf). */
const TICKS_PER_SECOND = 100;

export interface ProcessFigures {
  role: string;
  /** User plus system CPU time since the process started. */
  cpuSeconds: number;
  /** Unix time the process started. */
  startTimeSeconds: number;
}

function read(file: string): string {
  try {
    return readFileSync(file, 'latin1');
  } catch {
    return '';
  }
}

/** The fields of /proc/<pid>/stat after the command name (field 3, state, first); [] when the process is gone. */
function statFields(pid: number): string[] {
  const s = read(`/proc/${pid}/stat`);
  const close = s.lastIndexOf(')');
  return close < 0 ? [] : s.slice(close + 2).split(' ');
}

/** utime and stime of a process (ticks), [0, 0] when it is gone. */
export function procTimes(pid: number): [number, number] {
  const f = statFields(pid);
  // utime and stime are fields 14 and 15 of proc(5), 1-based from the pid.
  return f.length > 13 ? [Number(f[11]), Number(f[12])] : [0, 0];
}

/** The figures of the processes still running, in the order given. */
export function processFigures(processes: ReadonlyArray<{ role: string; pid: number }>): ProcessFigures[] {
  const boot = Number(/^btime (\d+)$/m.exec(read('/proc/stat'))?.[1] ?? NaN);
  const out: ProcessFigures[] = [];
  for (const { role, pid } of processes) {
    const f = statFields(pid);
    if (f.length <= 19) continue;
    // starttime is field 22: ticks after the boot.
    out.push({ role, cpuSeconds: (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND, startTimeSeconds: boot + Number(f[19]) / TICKS_PER_SECOND });
  }
  return out;
}
