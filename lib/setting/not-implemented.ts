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
  // Access and origin logs are shipped (lib/log/repository); these two logs are not yet.
  for (const k of ['dns', 'monitoring'] as const) {
    if ((l[k]?.backup ?? []).length > 0) issues.push({ path: `${at}.${k}.backup`, message: `shipping the ${k} log to repositories ${LATER}; leave it empty` });
  }
}

export function checkNotImplemented(setting: Setting, indices: number[], issues: SettingIssue[]): void {
  const log = setting.env.log;
  // The global logs are not shipped yet.
  for (const k of ['info', 'watch', 'error', 'metrics'] as const) {
    if (log[k].backup.length > 0) issues.push({ path: `env.log.${k}.backup`, message: `shipping the ${k} log to repositories ${LATER}; leave it empty` });
  }
  hostLogs(setting.functions, 'functions', issues);
  setting.hosting.forEach((h, i) => hostLogs(h.functions, `hosting[${indices[i]}].functions`, issues));
}
