// System figures of the `System` member (document 1), read by the primary from the kernel once
// a second (lib/stats/service.ts samples; readers get the last sample). /proc files are small
// and in memory: reading them synchronously costs well under a millisecond.
import { readFileSync, statSync } from 'node:fs';
import { procTimes } from './processes.js';
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';

interface DiskFigures {
  Path: string;
  /**
   * Normal: the cache directory is there; Unmounted: it is gone (its filesystem unmounted or the
   * directory removed); Invalid: it cannot be reached (EACCES, EIO ...). A disk a worker's store
   * excluded after write failures is made Invalid by the document (realtime-view.ts).
   */
  Status: 'Normal' | 'Invalid' | 'Unmounted';
  Read: number; ReadMerged: number; ReadSectors: number; ReadTime: number;
  Write: number; WriteMerged: number; WriteSectors: number; WriteTime: number;
  IOProgress: number; IOTime: number; IOWeightedTime: number;
}

export interface SystemFigures {
  /** 0.01 % of the machine's CPU time over the last second. */
  CPU: { Kernel: number; User: number; Idle: number; ProcKernel: number; ProcUser: number; Nice: number; IOWait: number; IRQ: number; SoftIRQ: number; Steal: number };
  /** Bytes: Free (MemFree), Available (MemAvailable), Svc (resident memory of the primary and its workers). */
  Mem: { Free: number; Available: number; Svc: number };
  Storage: { Disk: DiskFigures[] };
  TCPSocket: { Established: number; Timewait: number; Orphan: number; Alloc: number; Mem: number };
  /** The primary's event-loop delay: mean over the last second, 0.01 ms (see README). */
  EQ: number;
  SystemLoadAverage: { Min1: number; Min5: number; Min15: number };
}

const read = (p: string): string => {
  try { return readFileSync(p, 'utf8'); } catch { return ''; }
};

/** Jiffies of /proc/stat's `cpu` line: user nice system idle iowait irq softirq steal. */
function cpuLine(): number[] {
  const line = read('/proc/stat').split('\n').find((l) => l.startsWith('cpu ')) ?? '';
  return line.trim().split(/\s+/).slice(1, 9).map(Number);
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(read(`/proc/${pid}/status`));
  return m ? Number(m[1]) * 1024 : 0;
}

function meminfo(key: string, text: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : 0;
}

function tcpSockets(): SystemFigures['TCPSocket'] {
  const tcp = /^TCP: (.*)$/m.exec(read('/proc/net/sockstat'))?.[1] ?? '';
  const kv = (k: string): number => Number(new RegExp(`\\b${k} (\\d+)`).exec(tcp)?.[1] ?? 0);
  const snmp = read('/proc/net/snmp').split('\n').filter((l) => l.startsWith('Tcp:'));
  let established = 0;
  if (snmp.length === 2) {
    const names = snmp[0]!.split(/\s+/);
    const values = snmp[1]!.split(/\s+/);
    established = Number(values[names.indexOf('CurrEstab')] ?? 0);
  }
  return { Established: established, Timewait: kv('tw'), Orphan: kv('orphan'), Alloc: kv('alloc'), Mem: kv('mem') };
}

/** The /proc/diskstats line of the device holding `dir`, and whether `dir` is there. */
function disk(dir: string): DiskFigures {
  let dev: number | undefined;
  let missing = false;
  try { dev = statSync(dir).dev; } catch (err) { missing = (err as NodeJS.ErrnoException).code === 'ENOENT'; }
  const zero = { Read: 0, ReadMerged: 0, ReadSectors: 0, ReadTime: 0, Write: 0, WriteMerged: 0, WriteSectors: 0, WriteTime: 0, IOProgress: 0, IOTime: 0, IOWeightedTime: 0 };
  if (dev === undefined) return { Path: dir, Status: missing ? 'Unmounted' : 'Invalid', ...zero };
  // Linux dev_t: major in bits 8-19, minor in bits 0-7 and 20-31.
  const major = (dev >> 8) & 0xfff;
  const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
  for (const line of read('/proc/diskstats').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (Number(f[0]) !== major || Number(f[1]) !== minor) continue;
    const n = f.slice(3, 14).map(Number);
    return {
      Path: dir, Status: 'Normal', Read: n[0]!, ReadMerged: n[1]!, ReadSectors: n[2]!, ReadTime: n[3]!, Write: n[4]!, WriteMerged: n[5]!,
      WriteSectors: n[6]!, WriteTime: n[7]!, IOProgress: n[8]!, IOTime: n[9]!, IOWeightedTime: n[10]!,
    };
  }
  // A filesystem with no block device (overlay, tmpfs): reachable, no device counters.
  return { Path: dir, Status: 'Normal', ...zero };
}

export class SystemSampler {
  private lastCpu: number[] = cpuLine();
  private lastProc = new Map<number, [number, number]>();
  private readonly loop: ELDHistogram = monitorEventLoopDelay({ resolution: 10 });
  private figures: SystemFigures;

  /** `pids()`: the primary and its live workers; `disks()`: the cache directories (absolute). */
  constructor(private readonly pids: () => number[], private readonly disks: () => string[]) {
    this.loop.enable();
    this.figures = this.build(0, 0, this.lastCpu.map(() => 0));
  }

  get(): SystemFigures {
    return this.figures;
  }

  /** Called once a second: the CPU shares of the second since the previous call. */
  sample(): void {
    const cpu = cpuLine();
    const d = cpu.map((v, i) => v - (this.lastCpu[i] ?? 0));
    this.lastCpu = cpu;
    let procUser = 0, procKernel = 0;
    const seen = new Map<number, [number, number]>();
    for (const pid of this.pids()) {
      const t = procTimes(pid);
      seen.set(pid, t);
      // A process new since the last sample counts from its next sample on.
      const prev = this.lastProc.get(pid);
      if (prev !== undefined) { procUser += t[0] - prev[0]; procKernel += t[1] - prev[1]; }
    }
    this.lastProc = seen;
    this.figures = this.build(procUser, procKernel, d);
  }

  private build(procUser: number, procKernel: number, d: number[]): SystemFigures {
    const all = d.reduce((a, b) => a + b, 0);
    const share = (j: number): number => (all > 0 ? Math.round((j / all) * 10000) : 0);
    const mem = read('/proc/meminfo');
    const load = read('/proc/loadavg').split(' ').map(Number);
    const eq = Number.isFinite(this.loop.mean) ? Math.round((this.loop.mean / 1e6) * 100) : 0;
    this.loop.reset();
    return {
      CPU: {
        Kernel: share(d[2] ?? 0), User: share(d[0] ?? 0), Idle: share(d[3] ?? 0),
        ProcKernel: share(procKernel), ProcUser: share(procUser),
        Nice: share(d[1] ?? 0), IOWait: share(d[4] ?? 0), IRQ: share(d[5] ?? 0), SoftIRQ: share(d[6] ?? 0), Steal: share(d[7] ?? 0),
      },
      Mem: { Free: meminfo('MemFree', mem), Available: meminfo('MemAvailable', mem), Svc: this.pids().reduce((a, p) => a + rssBytes(p), 0) },
      Storage: { Disk: this.disks().map(disk) },
      TCPSocket: tcpSockets(),
      EQ: eq,
      SystemLoadAverage: { Min1: load[0] ?? 0, Min5: load[1] ?? 0, Min15: load[2] ?? 0 },
    };
  }

  close(): void {
    this.loop.disable();
  }
}
