// /metrics follows Prometheus's conventions: svc_build_info, the process families per process
// role, svc_state about serving only (a node without a license serves: it is not alarmed), the
// license in its own info family, and promtool's lint has nothing to say.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import t from 'tap';
import { StatsService, type StatsServiceDeps } from '../../lib/stats/service.js';
import { metricsText } from '../../lib/stats/prometheus.js';
import type { Setting } from '../../lib/setting/types.js';

function service(over: Partial<StatsServiceDeps> = {}): StatsService {
  return new StatsService({
    setting: () => ({ hosting: [{ name: 'h.test' }], meta: { group: '', labelGroupToMetrics: true }, functions: {} }) as unknown as Setting,
    version: '9.8.7', processes: () => [{ role: 'primary', pid: process.pid }], disks: () => [os.tmpdir()],
    licenseState: () => 'Inactive', licenseStatus: () => 'None', crashLooping: () => false,
    managementAccess: () => ({ Allow: 0, Deny: 0 }), indexPath: () => '/nonexistent/index.db', ...over,
  });
}

const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

t.test('a node without a license is Healthy in svc_state, and its license status is an info series', async (t) => {
  const text = metricsText(service().source, undefined);
  t.equal(sample(text, 'svc_state{state="Healthy"}'), 1);
  t.equal(sample(text, 'svc_state{state="Emergency"}'), 0);
  t.notMatch(text, /svc_state\{state="Inactive"\}/, 'no state an unlicensed node would alarm on');
  t.equal(sample(text, 'svc_license_info{status="None"}'), 1);
  t.equal(sample(metricsText(service({ crashLooping: () => true }).source, undefined), 'svc_state{state="Emergency"}'), 1, 'Emergency still shows');
});

t.test('svc_build_info names the version and node\'s; the process families carry a role per process', async (t) => {
  const text = metricsText(service().source, undefined);
  t.equal(sample(text, `svc_build_info{version="9.8.7",node_version="${process.versions.node}"}`), 1);
  const cpu = sample(text, 'process_cpu_seconds_total{role="primary"}')!;
  const used = process.cpuUsage();
  t.ok(cpu > 0 && Math.abs(cpu - (used.user + used.system) / 1e6) < 0.5, `CPU seconds of this process (${cpu})`);
  const start = sample(text, 'process_start_time_seconds{role="primary"}')!;
  t.ok(Math.abs(start - (Date.now() / 1000 - process.uptime())) < 2, `start time of this process (${start})`);
  const gone = metricsText(service({ processes: () => [{ role: 'primary', pid: process.pid }, { role: 'worker-0', pid: 2 ** 22 + 1 }] }).source, undefined);
  t.notMatch(gone, /role="worker-0"/, 'a process that is gone has no series');
});

t.test('promtool check metrics finds nothing to say about the exposition', async (t) => {
  const text = metricsText(service().source, 'edge-a');
  const check = spawnSync('promtool', ['check', 'metrics'], { input: text });
  t.equal(check.status, 0, `${check.stdout}${check.stderr}`);
  t.equal(`${check.stdout}${check.stderr}`.trim(), '', 'no lint warning');
});
