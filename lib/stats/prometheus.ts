// /metrics: Prometheus text exposition (format 0.0.4) written by hand from the primary's sums,
// so one scrape shows the whole node (prom-client keeps its own registry per process; ours are
// sums of the workers' deltas). Counters are cumulative since the primary started (`_total`,
// base units: bytes, seconds). Per-host families carry `vhost`; the transactions no virtual host
// took are `vhost="-"`, so a sum over `vhost` is the node. The first label is `group` when
// meta.group is set and meta.labelGroupToMetrics is true.
import { CACHE_RESULTS } from '../cache/policy/results.js';
import {
  CLIENT_HISTOGRAM_AT, cacheResultIndex, fieldIndex, HOST_GAUGE_INDEX, ORIGIN_HISTOGRAM_AT, TIME_BUCKETS_MS, type CounterField, type HostGauge,
} from '../record/counter-layout.js';
import type { ViewSource } from './realtime-view.js';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

class Writer {
  private readonly lines: string[] = [];
  constructor(private readonly prefix: string) {}

  family(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  }

  sample(name: string, labels: Record<string, string>, value: number): void {
    const parts = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`);
    const all = this.prefix === '' ? parts : [this.prefix, ...parts];
    const text = Number.isFinite(value) ? String(value) : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
    this.lines.push(all.length === 0 ? `${name} ${text}` : `${name}{${all.join(',')}} ${text}`);
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

/** Rows to expose: each host's totals, and the node's total minus the hosts' (`vhost="-"`). */
function rows(src: ViewSource): Array<[string, Float64Array]> {
  const hosts = src.hosts();
  const out: Array<[string, Float64Array]> = [];
  const rest = Float64Array.from(src.stats.node.total);
  for (const h of hosts) {
    const t = src.stats.series(h).total;
    out.push([h, t]);
    for (let i = 0; i < rest.length; i++) rest[i] -= t[i]!;
  }
  // Hosts removed from the setting leave their past in `-` (the node's figures never drop).
  out.push(['-', rest]);
  return out;
}

export function metricsText(src: ViewSource, group: string | undefined): string {
  const w = new Writer(group === undefined || group === '' ? '' : `group="${escape(group)}"`);
  const data = rows(src);
  const counter = (name: string, help: string, fields: CounterField[], scale = 1): void => {
    w.family(name, 'counter', help);
    for (const [vhost, v] of data) w.sample(name, { vhost }, fields.reduce((a, f) => a + v[fieldIndex(f)]!, 0) * scale);
  };
  counter('svc_client_requests_total', 'Client transactions that ended.', ['requests']);
  w.family('svc_client_responses_total', 'counter', 'Client transactions answered, by the status class sent.');
  for (const [vhost, v] of data) for (const c of CLASSES) w.sample('svc_client_responses_total', { vhost, class: c }, v[fieldIndex(`responses${c}`)]!);
  counter('svc_client_unanswered_total', 'Client transactions that ended before any byte of an answer went out.', ['unanswered']);
  counter('svc_client_incomplete_total', 'Client transactions whose answer did not go out whole.', ['incomplete']);
  counter('svc_client_received_bytes_total', 'Bytes received from clients (heads and bodies).', ['requestHeadBytes', 'requestBodyBytes']);
  counter('svc_client_sent_bytes_total', 'Bytes sent to clients (heads and bodies).', ['responseHeadBytes', 'responseBodyBytes']);
  counter('svc_client_bypassed_total', 'Client transactions sent to the origin by a bypass rule (UrlBypass).', ['urlBypass']);
  counter('svc_client_tls_requests_total', 'Client transactions over TLS (HTTP/1.1 and HTTP/2 on the TLS ports).', ['tlsRequests']);
  counter('svc_client_tls_received_bytes_total', 'Bytes received from clients over TLS (heads and bodies).', ['tlsInBytes']);
  counter('svc_client_tls_sent_bytes_total', 'Bytes sent to clients over TLS (heads and bodies).', ['tlsOutBytes']);
  counter('svc_client_handed_off_total', 'Client transactions handed to the owner worker of their URL (hash balance).', ['handedOff']);
  w.family('svc_client_cache_results_total', 'counter', 'Client transactions by cache result.');
  for (const [vhost, v] of data) for (const r of CACHE_RESULTS) w.sample('svc_client_cache_results_total', { vhost, result: r }, v[cacheResultIndex(r)]!);
  counter('svc_url_rewrites_total', 'URL rewrites applied (hosting[].urlRewrites; document 1 URLRewrite).', ['urlRewrites']);
  w.family('svc_access_control_total', 'counter', 'Client transactions access control let through (allow) or denied and redirected (deny).');
  for (const [vhost, v] of data) {
    w.sample('svc_access_control_total', { vhost, decision: 'allow' }, v[fieldIndex('accessAllow')]!);
    w.sample('svc_access_control_total', { vhost, decision: 'deny' }, v[fieldIndex('accessDeny')]!);
  }
  histogram(w, data, 'svc_client_response_time_seconds', 'Time from the request received to the answer complete.', CLIENT_HISTOGRAM_AT, 'totalMs', 'requests');
  counter('svc_origin_requests_total', 'Origin exchanges that ended.', ['originRequests']);
  w.family('svc_origin_responses_total', 'counter', 'Origin exchanges answered, by the origin status class.');
  for (const [vhost, v] of data) for (const c of CLASSES) w.sample('svc_origin_responses_total', { vhost, class: c }, v[fieldIndex(`originResponses${c}`)]!);
  counter('svc_origin_errors_total', 'Origin exchanges that failed (connect, receive timeout, server close, DNS).', ['originErrors']);
  counter('svc_origin_retried_total', 'Origin exchanges tried on more than one address.', ['originRetried']);
  counter('svc_origin_sent_bytes_total', 'Bytes sent to origins (heads and bodies).', ['originBytesSent']);
  counter('svc_origin_received_bytes_total', 'Bytes received from origins (heads and bodies).', ['originBytesReceived']);
  histogram(w, data, 'svc_origin_response_time_seconds', 'Time from the origin request to the end of its answer.', ORIGIN_HISTOGRAM_AT, 'originCompleteMs', 'originRequests');
  counter('svc_client_passed_through_total', 'Client transactions passed to the origin without the cache, for any reason (ClientHttpReqBypass).', ['bypassed']);
  counter('svc_memory_cache_evicted_bytes_total', 'Bytes the memory cache evicted to make room.', ['memoryEvictedBytes']);
  w.family('svc_cache_object_events_total', 'counter', 'Cached objects written to disk, erased, purged and expired.');
  for (const [vhost, v] of data) {
    for (const [event, f] of [['create', 'fileCreated'], ['erase', 'fileErased'], ['purge', 'filePurged'], ['expire', 'fileExpired']] as const) {
      w.sample('svc_cache_object_events_total', { vhost, event }, v[fieldIndex(f)]!);
    }
  }
  hostGauges(w, src);
  connections(w, src);
  system(w, src);
  return w.text();
}

function histogram(w: Writer, data: Array<[string, Float64Array]>, name: string, help: string, at: number, sumMs: CounterField, count: CounterField): void {
  w.family(name, 'histogram', help);
  for (const [vhost, v] of data) {
    let cumulative = 0;
    TIME_BUCKETS_MS.forEach((ms, i) => {
      cumulative += v[at + i]!;
      w.sample(`${name}_bucket`, { vhost, le: String(ms / 1000) }, cumulative);
    });
    cumulative += v[at + TIME_BUCKETS_MS.length]!;
    w.sample(`${name}_bucket`, { vhost, le: '+Inf' }, cumulative);
    w.sample(`${name}_sum`, { vhost }, v[fieldIndex(sumMs)]! / 1000);
    w.sample(`${name}_count`, { vhost }, v[fieldIndex(count)]!);
  }
}

/** Gauges per host: transactions in progress, origin connections, what the caches hold. */
function hostGauges(w: Writer, src: ViewSource): void {
  const hosts = src.hosts().map((h) => [h, src.stats.hostGauges(h)] as const);
  const family = (name: string, help: string, gauge: HostGauge, labels: Record<string, string> = {}): void => {
    w.family(name, 'gauge', help);
    for (const [vhost, g] of hosts) w.sample(name, { vhost, ...labels }, g[HOST_GAUGE_INDEX[gauge]]!);
  };
  family('svc_client_transactions_in_progress', 'Client transactions received and not finished.', 'clientSessions');
  w.family('svc_origin_connections', 'gauge', 'Origin connections open, and those carrying an exchange.');
  for (const [vhost, g] of hosts) {
    w.sample('svc_origin_connections', { vhost, state: 'open' }, g[HOST_GAUGE_INDEX.originSessions]!);
    w.sample('svc_origin_connections', { vhost, state: 'busy' }, g[HOST_GAUGE_INDEX.originActive]!);
  }
  family('svc_origin_queued_requests', 'Origin requests waiting for a connection (every one busy at maxConnections).', 'originQueued');
  family('svc_memory_cache_bytes', 'Bytes of the host\'s content in the workers\' memory caches.', 'memoryBytes');
  family('svc_memory_cache_objects', 'Objects of the host in the workers\' memory caches.', 'memoryObjects');
  w.family('svc_disk_cache_objects', 'gauge', 'Objects of the host in the disk cache index (counted every few seconds).');
  for (const [vhost] of hosts) w.sample('svc_disk_cache_objects', { vhost }, src.census(vhost)?.files ?? 0);
  w.family('svc_disk_cache_bytes', 'gauge', 'Body bytes of the host in the disk cache (counted every few seconds).');
  for (const [vhost] of hosts) w.sample('svc_disk_cache_bytes', { vhost }, src.census(vhost)?.bytes ?? 0);
}

/** Connections of the node: client side (ServerSocket) and origin side (ClientSocket). */
function connections(w: Writer, src: ViewSource): void {
  const g = src.stats.nodeGauges();
  const t = src.stats.node.total;
  const counter = (name: string, help: string, f: CounterField): void => {
    w.family(name, 'counter', help);
    w.sample(name, {}, t[fieldIndex(f)]!);
  };
  counter('svc_client_connections_accepted_total', 'Client connections the service ports accepted.', 'clientAccepted');
  counter('svc_client_connections_closed_total', 'Client connections closed.', 'clientClosed');
  counter('svc_origin_connections_opened_total', 'Origin connections opened.', 'originConnected');
  counter('svc_origin_connections_closed_total', 'Origin connections closed.', 'originClosed');
  w.family('svc_client_connections', 'gauge', 'Client connections open, and those with a request in progress.');
  w.sample('svc_client_connections', { state: 'open' }, g.serverSockets);
  w.sample('svc_client_connections', { state: 'busy' }, g.serverBusy);
  w.family('svc_disk_writes_waiting', 'gauge', 'Object writes and index changes waiting for the disk writers (WaitingFiles2Write).');
  w.sample('svc_disk_writes_waiting', {}, g.waitingWrites);
  const acl = src.managementAccess();
  w.family('svc_management_requests_total', 'counter', 'Management API requests the ACL let through (allow) and refused (deny).');
  w.sample('svc_management_requests_total', { decision: 'allow' }, acl.Allow);
  w.sample('svc_management_requests_total', { decision: 'deny' }, acl.Deny);
}

/** The conventional process families, one series per process of the node (lib/stats/processes.ts). */
function processes(w: Writer, src: ViewSource): void {
  const list = src.processes?.();
  if (list === undefined || list.length === 0) return;
  w.family('process_cpu_seconds_total', 'counter', 'User and system CPU time of each process of the node (role: primary, worker-<n>).');
  for (const p of list) w.sample('process_cpu_seconds_total', { role: p.role }, p.cpuSeconds);
  w.family('process_start_time_seconds', 'gauge', 'Start time of each process of the node since the Unix epoch (role: primary, worker-<n>).');
  for (const p of list) w.sample('process_start_time_seconds', { role: p.role }, p.startTimeSeconds);
}

function system(w: Writer, src: ViewSource): void {
  const s = src.system();
  const gauge = (name: string, help: string, value: number, labels: Record<string, string> = {}): void => {
    w.family(name, 'gauge', help);
    w.sample(name, labels, value);
  };
  gauge('svc_build_info', 'The version of the service and of node it runs on; always 1.', 1, { version: src.version, node_version: process.versions.node });
  gauge('svc_uptime_seconds', 'Seconds since the primary started.', Math.floor(((src.now ?? Date.now)() - src.stats.startedAt) / 1000));
  processes(w, src);
  // Serving only: a license decides no serving (lib/license/service.ts), so a node without one
  // is Healthy here; document 1's State (Inactive by the license) stays in /monitoring, and the
  // license has its own family.
  w.family('svc_state', 'gauge', 'Whether the node serves (Healthy) or cannot serve from its cache or keep its workers up (Emergency): 1 for the current one.');
  const serving = src.state() === 'Emergency' ? 'Emergency' : 'Healthy';
  for (const st of ['Healthy', 'Emergency']) w.sample('svc_state', { state: st }, serving === st ? 1 : 0);
  const license = src.licenseStatus?.();
  if (license !== undefined) gauge('svc_license_info', 'The installed license\'s status (Available, Expired, Invalid, None); always 1. It changes no serving.', 1, { status: license });
  w.family('svc_system_cpu_ratio', 'gauge', 'Share of the machine CPU time in the last second, by mode.');
  const cpu = s.CPU;
  for (const [mode, v] of Object.entries({ user: cpu.User, kernel: cpu.Kernel, idle: cpu.Idle, nice: cpu.Nice, iowait: cpu.IOWait, irq: cpu.IRQ, softirq: cpu.SoftIRQ, steal: cpu.Steal })) {
    w.sample('svc_system_cpu_ratio', { mode }, v / 10000);
  }
  w.family('svc_process_cpu_ratio', 'gauge', 'Share of the machine CPU time the primary and its workers used in the last second.');
  w.sample('svc_process_cpu_ratio', { mode: 'user' }, cpu.ProcUser / 10000);
  w.sample('svc_process_cpu_ratio', { mode: 'kernel' }, cpu.ProcKernel / 10000);
  gauge('svc_system_memory_free_bytes', 'MemFree of /proc/meminfo.', s.Mem.Free);
  gauge('svc_system_memory_available_bytes', 'MemAvailable of /proc/meminfo.', s.Mem.Available);
  gauge('svc_process_resident_memory_bytes', 'Resident memory of the primary and its workers.', s.Mem.Svc);
  w.family('svc_system_load_average', 'gauge', 'System load average over 1, 5 and 15 minutes.');
  w.sample('svc_system_load_average', { period: '1m' }, s.SystemLoadAverage.Min1);
  w.sample('svc_system_load_average', { period: '5m' }, s.SystemLoadAverage.Min5);
  w.sample('svc_system_load_average', { period: '15m' }, s.SystemLoadAverage.Min15);
  gauge('svc_event_loop_delay_seconds', 'Largest mean event-loop delay of the primary and the workers over the last second (EQ).',
    Math.max(s.EQ, src.stats.nodeGauges().eventLoopLag) / 100_000);
  const b = src.bus?.();
  if (b !== undefined) {
    gauge('svc_bus_connected', 'Whether the Redis invalidation bus is reachable (1) or not (0).', b.Connected ? 1 : 0);
    gauge('svc_bus_pending_entries', 'Bus entries after this node\'s position (counted up to 10000).', b.Pending);
    gauge('svc_bus_lag_seconds', 'Age of the oldest bus entry this node has not applied; 0 when none.', b.LagSeconds);
    w.family('svc_bus_applied_total', 'counter', 'Bus entries of other nodes applied here since the start.');
    w.sample('svc_bus_applied_total', {}, b.Applied);
    w.family('svc_bus_appended_total', 'counter', 'Invalidations this node appended to the bus since the start.');
    w.sample('svc_bus_appended_total', {}, b.Appended);
  }
  w.family('svc_system_tcp_sockets', 'gauge', 'TCP sockets of the machine by state (/proc/net/sockstat, /proc/net/snmp).');
  for (const [state, v] of Object.entries({ established: s.TCPSocket.Established, timewait: s.TCPSocket.Timewait, orphan: s.TCPSocket.Orphan, alloc: s.TCPSocket.Alloc })) {
    w.sample('svc_system_tcp_sockets', { state }, v);
  }
}
