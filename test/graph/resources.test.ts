// The resource table against document 1: every graph resource it lists exists, and every
// statistics member a line reads is spelled as document 1 spells it (so the lines fill in as
// the statistics service carries those members).
import t from 'tap';
import { STRIDE } from '../../lib/record/counter-layout.js';
import { GLOBAL_RESOURCES, VHOST_RESOURCES } from '../../lib/graph/resources.js';
import type { ResourceDef } from '../../lib/graph/lines.js';
import { StatsAggregator } from '../../lib/stats/aggregate.js';
import { hostDocument } from '../../lib/stats/realtime-view.js';
import { SystemSampler } from '../../lib/stats/system.js';

const DOC1_GLOBAL = ['cpu', 'svcrtcpu', 'mem', 'iowait', 'loadavg', 'ssockevent', 'ssockusage', 'csockevent', 'csockusage', 'acldenied', 'eq', 'wf2w', 'urlrewrite', 'tcpsocket'];
const DOC1_VHOST = ['hitratio', 'mem', 'wf2d', 'client_httpreq_bypass', 'client_httpreq_denied', 'client_http_session', 'client_traffic', 'client_http_res',
  'client_http_res_complete', 'client_http_res_time1', 'client_http_res_time2', 'client_traffic_ssl', 'origin_http_session', 'origin_traffic', 'origin_http_res',
  'origin_http_res_complete', 'origin_http_res_time1', 'origin_http_res_time2', 'filecount', 'client_http_res_detail', 'client_http_res_hit', 'origin_http_res_detail'];

// Document 1, "System members" and "VirtualHost[] members".
const cpu = ['Kernel', 'User', 'Idle', 'ProcKernel', 'ProcUser', 'Nice', 'IOWait', 'IRQ', 'SoftIRQ', 'Steal'].map((m) => `System.CPU.${m}`);
const DOC1_SYSTEM = new Set([
  ...cpu, 'System.Mem.Free',
  ...['Total', 'Established', 'Accepted', 'Closed'].map((m) => `System.ServerSocket.${m}`),
  ...['Total', 'Established', 'Connected', 'Closed'].map((m) => `System.ClientSocket.${m}`),
  ...['Established', 'Timewait', 'Orphan', 'Alloc', 'Mem'].map((m) => `System.TCPSocket.${m}`),
  'System.EQ', 'System.RQ', 'System.WaitingFiles2Write', 'System.ServiceAccess.Allow', 'System.ServiceAccess.Deny',
  'System.SystemLoadAverage.Min1', 'System.SystemLoadAverage.Min5', 'System.SystemLoadAverage.Min15', 'System.URLRewrite',
  // Document 1 names no member for the service's memory: ours (README, "Statistics").
  'System.Mem.Available', 'System.Mem.Svc',
]);
const DOC1_VHOST_MEMBERS = new Set(['Memory', 'SecuredMemory', 'FileTotal', 'FileOpened', 'FileInstance', 'WaitingFiles2Delete', 'ClientHttpReqBypass',
  'ClientHttpReqDenied', 'ClientSession', 'ClientActiveSession', 'OriginSession', 'OriginActiveSession', 'ClientTraffic.Traffic']);

/** An object that records every member path read from it. */
function recorder(prefix: string, seen: Set<string>): Record<string, unknown> {
  return new Proxy({}, {
    get(_t, k) {
      if (typeof k !== 'string') return undefined;
      const p = prefix === '' ? k : `${prefix}.${k}`;
      seen.add(p);
      return recorder(p, seen);
    },
  });
}

function membersRead(r: ResourceDef): string[] {
  const seen = new Set<string>();
  for (const l of r.lines) {
    const s = { doc: recorder('', seen), row: new Float64Array(STRIDE) };
    l.value(s);
    l.weight?.(s);
  }
  return [...seen].filter((p) => ![...seen].some((q) => q.startsWith(`${p}.`)));
}

t.test('every graph resource document 1 lists exists, and no other', async (t) => {
  t.same(GLOBAL_RESOURCES.map((r) => r.name).sort(), [...DOC1_GLOBAL].sort());
  t.same(VHOST_RESOURCES.map((r) => r.name).sort(), [...DOC1_VHOST].sort());
});

t.test('Main and Sub are what document 1 names; the open line sets have several lines', async (t) => {
  const labels = (list: readonly ResourceDef[], n: string) => list.find((r) => r.name === n)!.lines.map((l) => l.label);
  t.same(labels(GLOBAL_RESOURCES, 'ssockevent'), ['Accepted', 'Closed']);
  t.same(labels(GLOBAL_RESOURCES, 'csockusage'), ['Total', 'Established']);
  t.same(labels(VHOST_RESOURCES, 'client_traffic'), ['Inbound', 'Outbound']);
  t.same(labels(VHOST_RESOURCES, 'client_http_res'), ['Responses', 'Requests']);
  for (const n of ['filecount', 'client_http_res_detail', 'client_http_res_hit', 'origin_http_res_detail']) {
    t.ok(labels(VHOST_RESOURCES, n).length >= 3, `${n} has several lines`);
  }
});

t.test('every statistics member a line reads is spelled as document 1 spells it', async (t) => {
  for (const r of GLOBAL_RESOURCES) for (const m of membersRead(r)) t.ok(DOC1_SYSTEM.has(m), `${r.name} reads ${m}`);
  for (const r of VHOST_RESOURCES) for (const m of membersRead(r)) t.ok(DOC1_VHOST_MEMBERS.has(m), `vhost ${r.name} reads ${m}`);
});

t.test('every line finds its member in the realtime document the statistics service builds', async (t) => {
  const stats = new StatsAggregator();
  stats.tick();
  const system = new SystemSampler(() => [process.pid], () => []);
  t.teardown(() => system.close());
  system.sample();
  const doc = hostDocument({
    stats, version: 't', name: 'n', state: () => 'Healthy', hosts: () => ['a.test'], system: () => system.get(),
    managementAccess: () => ({ Allow: 0, Deny: 0 }), census: () => undefined, directoryStats: () => undefined,
  }, 'realtime').Host as Record<string, unknown>;
  const vhost = (doc.VirtualHost as Record<string, unknown>[])[0]!;
  for (const r of GLOBAL_RESOURCES) {
    for (const l of r.lines) t.type(l.value({ doc, row: stats.node.second }), 'number', `${r.name}: ${l.label}`);
  }
  for (const r of VHOST_RESOURCES) {
    for (const l of r.lines) t.type(l.value({ doc: vhost, row: stats.series('a.test').second }), 'number', `vhost ${r.name}: ${l.label}`);
  }
});
