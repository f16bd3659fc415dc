// What `svc status` and `svc reload` print from the node's answers: plain lines an operator
// reads at a glance, and that a script can grep (`restart pending:`, `refused`).
import type { Answer } from './node-api.js';

type Out = (s: string) => void;
type Json = Record<string, unknown>;

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return `${d > 0 ? `${d}d ` : ''}${d > 0 || h > 0 ? `${h}h ` : ''}${m}m ${seconds % 60}s`;
}

/** `svc status` from /monitoring/status (lib/primary/status-report.ts). */
export function printStatus(base: string, r: Json, out: Out): void {
  const procs = (r.processes ?? {}) as Json;
  const workers = (Array.isArray(r.workers) ? r.workers : []) as Json[];
  const serving = workers.filter((w) => w.state === 'serving').length;
  const lic = (r.license ?? {}) as Json;
  const ports = (r.ports ?? {}) as Json;
  const pending = list(r.restartPending);
  out(`running at ${base}: version ${String(r.version)}${r.state === null ? '' : `, State ${String(r.state)}`}\n`);
  out(`  setting:    ${String(r.setting)} (generation ${String(r.settingGeneration)})${pending.length === 0 ? '' : `; restart pending: ${pending.join(', ')}`}\n`);
  out(`  uptime:     ${duration(Number(r.uptimeSeconds))} since ${String(r.startedAt)} (primary ${duration(Number(r.primaryUptimeSeconds))})\n`);
  out(`  processes:  supervisor ${String(procs.supervisor)}, primary ${String(procs.primary)}\n`);
  out(`  workers:    ${serving}/${workers.length} serving: ${workers.map((w) => `#${String(w.index)} ${w.pid === null ? '-' : String(w.pid)} ${String(w.state)}`).join(', ')}\n`);
  out(`  license:    ${String(lic.status)}${lic.serialNumber === null ? '' : ` ${String(lic.serialNumber)}`}${lic.notAfter === null ? '' : `, until ${String(lic.notAfter)} (${String(lic.remainDays)} days)`}\n`);
  const mgmt = [`api ${String(ports.api)}`, ...(ports.apiTls === null ? [] : [`api TLS ${String(ports.apiTls)}`]),
    ...(ports.stats === null ? [] : [`statistics ${String(ports.stats)}`]), ...(ports.logUdp === null ? [] : [`log listener ${String(ports.logUdp)}/udp`])];
  out(`  ports:      service ${list(ports.service).join(', ') || 'none'}; ${mgmt.join(', ')}\n`);
}

/** `svc reload` from /setting/deploy/local: exit 0 applied, 1 refused (the running setting stays). */
export function printReload(a: Answer, out: Out, err: Out): number {
  const b = a.body;
  if (a.status === 200 && b.status === 'OK') {
    const r = (b.result ?? {}) as Json;
    const hosts = r.changedHosts === 'all' ? 'every host' : list(r.changedHosts).join(', ') || 'no host';
    out(`reloaded: applied (re-applied: ${hosts})\n`);
    const pending = list(r.restartPending);
    if (pending.length > 0) out(`restart pending: ${pending.join(', ')} (changes under env take effect at the next svc restart)\n`);
    for (const w of list(r.warnings)) err(`warning: ${w}\n`);
    return 0;
  }
  const issues = (Array.isArray(b.issues) ? b.issues : []) as Json[];
  err(`reload refused${b.error === undefined ? ` (${a.status})` : ` (error ${String(b.error)})`}; the running setting stays\n`);
  if (issues.length > 0) for (const i of issues) err(`${String(i.path) || '(file)'}: ${String(i.message)}\n`);
  else err(`${String(b.reason ?? b.message ?? JSON.stringify(b))}\n`);
  return 1;
}

/**
 * After an applied reload, the parts the runtime could not honour though the file was valid: a
 * host's HTTPS service without a usable certificate or TLS port (`/get/https` 503; its plain
 * service runs). Said on stderr; the reload itself was applied, so the exit status stays 0.
 */
export function printUnserved(https: Answer | undefined, err: Out): void {
  if (https?.status !== 503) return;
  for (const e of (Array.isArray(https.body.result) ? https.body.result : []) as Json[]) {
    if (e.enable === false && typeof e.error === 'string' && e.error !== 'virtual host is disabled') {
      err(`not serving: hosting[name=${String(e.name)}].https: ${e.error} (its plain service runs; svc get https)\n`);
    }
  }
}
