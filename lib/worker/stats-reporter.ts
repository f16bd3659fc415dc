// Hands this worker's statistics to the primary once a second in one IPC message: the counters
// as deltas (updated by the pipeline with no IPC), and the gauges as they are now, read here
// from the worker's servers, origin pools and memory cache (once a second, off the request
// path).
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';
import type { StatsDeltasMessage, WorkerGauges } from '../ipc/messages.js';
import type { HostMemory } from '../cache/memory-store.js';
import { cacheEvents } from '../cache/events.js';
import { originSockets } from '../origin/trace.js';
import { workerCounters, type Counters } from '../pipeline/parts/counters.js';
import { fieldIndex, GAUGE_STRIDE, HOST_GAUGE_INDEX, HOST_GAUGE_STRIDE, STRIDE } from '../record/counter-layout.js';
import { openClientSockets } from './client-sockets.js';

const STATS_INTERVAL_MS = 1000;
const ORIGIN_CONNECTED = fieldIndex('originConnected');
const ORIGIN_CLOSED = fieldIndex('originClosed');
const EVICTED_BYTES = fieldIndex('memoryEvictedBytes');
const EVICTED_OBJECTS = fieldIndex('memoryEvictedObjects');
const EVENTS = [['create', fieldIndex('fileCreated')], ['erase', fieldIndex('fileErased')],
  ['purge', fieldIndex('filePurged')], ['expire', fieldIndex('fileExpired')]] as const;

/** What the reporter reads from the worker (RtWorker.statsProbe). */
export interface WorkerProbe {
  /** Origin connections of a served host; undefined for a host no longer served. */
  origin(host: string): { open: number; busy: number; queued: number } | undefined;
  /** The host's share of the memory cache; undefined before the cache is open. */
  memory(host: string): HostMemory | undefined;
  /** Body files of the host open for reading or being written. */
  filesOpen(host: string): number;
  /** Client connections with a request in progress, over every service server. */
  busyConnections(): number;
  waitingWrites(): number;
  disks(): string[];
}

const NO_PROBE: WorkerProbe = {
  origin: () => undefined, memory: () => undefined, filesOpen: () => 0, busyConnections: () => 0, waitingWrites: () => 0, disks: () => [],
};

export class StatsReporter {
  private timer: NodeJS.Timeout | undefined;
  private readonly loop: ELDHistogram = monitorEventLoopDelay({ resolution: 10 });
  /** Cumulative figures read from elsewhere, as last put into the counters (see catchUp). */
  private readonly seen = new Map<string, number>();

  constructor(private readonly send: (m: StatsDeltasMessage, done?: () => void) => void,
    private readonly probe: WorkerProbe = NO_PROBE, private readonly counters: Counters = workerCounters) {}

  start(): void {
    this.loop.enable();
    // unref: a worker that drains must not be kept alive by its statistics timer.
    this.timer = setInterval(() => this.report(), STATS_INTERVAL_MS).unref();
  }

  /**
   * Adds to a counter what a cumulative figure kept elsewhere (the origin client, the memory
   * cache) gained since the last look; a figure that restarted (a new cache) counts from zero.
   */
  private catchUp(key: string, at: number, now: number): void {
    const last = this.seen.get(key) ?? 0;
    this.counters.values[at] += now >= last ? now - last : now;
    this.seen.set(key, now);
  }

  /** The message of this second: the deltas since the previous one and the gauges now. */
  take(): StatsDeltasMessage {
    const c = this.counters;
    this.catchUp('originConnected', ORIGIN_CONNECTED, originSockets.connected);
    this.catchUp('originClosed', ORIGIN_CLOSED, originSockets.closed);
    const names = c.hostNames();
    for (let r = 1; r < names.length; r++) {
      const name = names[r]!;
      const ev = cacheEvents(name);
      if (ev !== undefined) for (const [k, at] of EVENTS) this.catchUp(`${k} ${name}`, r * STRIDE + at, ev[k]);
      const mem = this.probe.memory(name);
      if (mem === undefined) continue;
      this.catchUp(`evictedBytes ${name}`, r * STRIDE + EVICTED_BYTES, mem.evictedBytes);
      this.catchUp(`evictedObjects ${name}`, r * STRIDE + EVICTED_OBJECTS, mem.evictedObjects);
    }
    const d = c.takeDeltas();
    const rows = d.hosts.length;
    const gauges = new Array<number>(rows * HOST_GAUGE_STRIDE).fill(0);
    for (let r = 0; r < rows; r++) {
      const at = r * HOST_GAUGE_STRIDE;
      for (let g = 0; g < GAUGE_STRIDE; g++) gauges[at + g] = d.gauges[r * GAUGE_STRIDE + g]!;
      if (r === 0) continue;
      const o = this.probe.origin(d.hosts[r]!);
      if (o !== undefined) {
        gauges[at + HOST_GAUGE_INDEX.originSessions] = o.open;
        gauges[at + HOST_GAUGE_INDEX.originActive] = o.busy;
        gauges[at + HOST_GAUGE_INDEX.originQueued] = o.queued;
      }
      const mem = this.probe.memory(d.hosts[r]!);
      if (mem !== undefined) {
        gauges[at + HOST_GAUGE_INDEX.memoryBytes] = mem.bytes;
        gauges[at + HOST_GAUGE_INDEX.memoryObjects] = mem.objects;
      }
      gauges[at + HOST_GAUGE_INDEX.filesOpen] = this.probe.filesOpen(d.hosts[r]!);
    }
    const lag = this.loop.mean;
    this.loop.reset();
    const node: WorkerGauges = {
      serverSockets: openClientSockets(),
      serverBusy: this.probe.busyConnections(),
      eventLoopLag: Number.isFinite(lag) ? Math.round((lag / 1e6) * 100) : 0,
      waitingWrites: this.probe.waitingWrites(),
      disks: this.probe.disks(),
    };
    return {
      type: 'stats-deltas', stride: d.stride, hosts: d.hosts, values: Array.from(d.values),
      gaugeStride: HOST_GAUGE_STRIDE, gauges, node,
    };
  }

  report(): void {
    this.send(this.take());
  }

  /** The last deltas before the worker exits (a drain): resolves once they are handed to IPC. */
  flush(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.loop.disable();
    const m = this.take();
    return new Promise((resolve) => {
      const bound = setTimeout(resolve, 500);
      this.send(m, () => { clearTimeout(bound); resolve(); });
    });
  }
}
