// Settings of document 3 the server does not carry out yet are refused at validation, each at
// its JSON path, rather than accepted and ignored: an operator must never believe a log is
// written or shipped when it is not. Remove a rule here when its feature lands (README, "Logs").
import type { SettingIssue } from './issues.js';
import type { DeepPartial, Functions, Setting } from './types.js';

const LATER = 'is not implemented yet (issue 11)';

function hostLogs(fn: DeepPartial<Functions> | undefined, base: string, issues: SettingIssue[]): void {
  const l = fn?.operations?.log;
  if (l === undefined) return;
  const at = `${base}.operations.log`;
  if (l.dns?.enable === true) issues.push({ path: `${at}.dns.enable`, message: `the dns log ${LATER}; set it to false` });
  if (l.monitoring?.enable === true) issues.push({ path: `${at}.monitoring.enable`, message: `the monitoring log ${LATER}; set it to false` });
  // Access and origin logs are shipped (lib/log/repository); these two logs are not written yet.
  for (const k of ['dns', 'monitoring'] as const) {
    if ((l[k]?.backup ?? []).length > 0) issues.push({ path: `${at}.${k}.backup`, message: `shipping the ${k} log to repositories ${LATER}; leave it empty` });
  }
}

export function checkNotImplemented(setting: Setting, indices: number[], issues: SettingIssue[]): void {
  const log = setting.env.log;
  if (log.meta.port !== undefined) {
    issues.push({ path: 'env.log.meta.port', message: `the UDP log listener for sub-components ${LATER}; remove the member` });
  }
  for (const k of ['info', 'watch'] as const) {
    const l = log[k];
    if (l.rolling.time !== undefined || l.rolling.size !== undefined) {
      issues.push({ path: `env.log.${k}.rolling`, message: `rolling the ${k} log ${LATER}; remove rolling.time and rolling.size` });
    }
    if (l.compression) issues.push({ path: `env.log.${k}.compression`, message: `compressing the ${k} log ${LATER} (it does not roll); set it to false` });
  }
  for (const k of ['error', 'metrics', 'system', 'originError'] as const) {
    if (log[k].enable) issues.push({ path: `env.log.${k}.enable`, message: `the ${k} log ${LATER}; set it to false` });
  }
  // A repository receives rolled files, and these logs do not roll (or are not written) yet.
  for (const k of ['info', 'watch', 'error', 'metrics'] as const) {
    if (log[k].backup.length > 0) issues.push({ path: `env.log.${k}.backup`, message: `shipping the ${k} log to repositories ${LATER}; leave it empty` });
  }
  hostLogs(setting.functions, 'functions', issues);
  setting.hosting.forEach((h, i) => hostLogs(h.functions, `hosting[${indices[i]}].functions`, issues));
}
