// `GET /monitoring/status` (ours, what `svc status` prints): the state an operator asks of a
// running node in one answer (its processes, workers, uptime, setting generation, license and
// ports), so that the command line needs one call and reads nothing of the machine itself.
import type { LicenseInfo } from '../license/service.js';
import type { Setting } from '../setting/types.js';
import { changedPaths } from '../lifecycle/diff.js';
import { NODE_STARTED_ENV } from '../ipc/supervisor-messages.js';


export interface StatusInputs {
  version: string;
  /** The node State of the statistics (Healthy, Inactive, Emergency), once they run. */
  state: string | undefined;
  settingPath: string;
  /** The running setting and the one waiting for a restart (env changes), if any. */
  running: Setting;
  artifact: Setting | undefined;
  settingGeneration: number;
  workers: Array<{ index: number; pid: number | undefined; ready: boolean; startedAt: number }>;
  license: LicenseInfo;
  ports: { api: number | undefined; apiTls: number | undefined; stats: number | undefined; log: number | undefined };
}

/** The listen addresses of the enabled hosts, each once, in setting order. */
function servicePorts(s: Setting): string[] {
  const out = new Set<string>();
  for (const h of s.hosting) if (h.enable !== false && h.listen !== 'off') out.add(h.listen);
  return [...out];
}

export function statusReport(i: StatusInputs, now = Date.now()): Record<string, unknown> {
  const nodeStarted = Number(process.env[NODE_STARTED_ENV]) || now - process.uptime() * 1000;
  return {
    version: i.version,
    state: i.state ?? null,
    setting: i.settingPath,
    processes: { supervisor: process.ppid, primary: process.pid },
    startedAt: new Date(nodeStarted).toISOString(),
    uptimeSeconds: Math.round((now - nodeStarted) / 1000),
    primaryUptimeSeconds: Math.round(process.uptime()),
    workers: i.workers.map((w) => ({
      index: w.index, pid: w.pid ?? null, state: w.pid === undefined ? 'down' : w.ready ? 'serving' : 'starting',
      uptimeSeconds: Math.round((now - w.startedAt) / 1000),
    })),
    settingGeneration: i.settingGeneration,
    restartPending: i.artifact === undefined ? [] : changedPaths(i.running.env, i.artifact.env, 'env'),
    license: {
      status: i.license.Status, serialNumber: i.license.SerialNumber || null,
      notAfter: i.license.Validity.NotAfter || null, remainDays: i.license.Validity.RemainDays,
    },
    ports: {
      service: servicePorts(i.running),
      api: i.ports.api ?? null, apiTls: i.ports.apiTls ?? null, stats: i.ports.stats ?? null, logUdp: i.ports.log ?? null,
    },
  };
}
