// Settings of document 3 the server does not carry out yet are refused at validation, each at
// its JSON path, rather than accepted and ignored: an operator must never believe a log is
// written or shipped when it is not. Remove a rule here when its feature lands (README, "Logs").
import type { SettingIssue } from './issues.js';
import type { Setting } from './types.js';

export function checkNotImplemented(setting: Setting, issues: SettingIssue[]): void {
  // The metrics snapshots (one file per cron fire, lib/log/global/metrics-log.ts) are not shipped yet.
  if (setting.env.log.metrics.backup.length > 0) {
    issues.push({ path: 'env.log.metrics.backup', message: 'shipping the metrics log to repositories is not implemented yet (issue 11); leave it empty' });
  }
}
