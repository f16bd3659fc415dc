// Rules of the log backup repositories (document 3, `env.log.repository` and each log's
// `backup`) that the schema cannot state: names that exist, an upload cron and path template
// the scheduler can follow, credentials a cloudC key can sign with, an export filter that can
// match, and a log that rolls (a repository receives rolled files).
import { createPrivateKey } from 'node:crypto';
import { parseMinuteHour } from '../log/cron.js';
import { unknownVariables } from '../log/repository/path-template.js';
import type { SettingIssue } from '../setting/issues.js';
import { deepMerge } from '../setting/merge.js';
import type { DeepPartial, Functions, Setting } from '../setting/types.js';

type RepositorySetting = Setting['env']['log']['repository']['list'][number];

function checkRepository(r: RepositorySetting, at: string, issues: SettingIssue[]): void {
  // Not two fields: the schema's format (svc-cron2) has said so already.
  if (r.rolling.trim().split(/\s+/).length === 2) {
    try {
      parseMinuteHour(r.rolling);
    } catch (err) {
      issues.push({ path: `${at}.rolling`, message: (err as Error).message });
    }
  }
  const unknown = unknownVariables(r.path);
  if (unknown.length > 0) issues.push({ path: `${at}.path`, message: `unknown path variable ${unknown.map((u) => `{${u}}`).join(', ')}` });
  const e = r.endpoint as Record<string, unknown>;
  if (r.type === 'statsd' || r.type === 'logagent') {
    const ex = e.exports as { enable?: boolean; matchingList?: string[] | null } | undefined;
    if (ex?.enable === true && (ex.matchingList ?? []).length === 0) {
      issues.push({ path: `${at}.endpoint.exports.matchingList`, message: 'exports.enable is true: give at least one pattern (or set enable to false to send every event)' });
    }
  }
  if (r.type === 'logagent' && typeof e.url === 'string' && !/^https?:\/\/[^/]/i.test(e.url)) {
    issues.push({ path: `${at}.endpoint.url`, message: 'must be an http:// or https:// URL' });
  }
  if (r.type === 'cloudC-storage') {
    if (!/^\/*[^/{}]+\/./.test(r.path)) issues.push({ path: `${at}.path`, message: 'cloudC-storage: the path must start with the bucket name and a slash (<bucket>/<object>)' });
    if (typeof e.credential === 'string') return;
    if (typeof e.client_email !== 'string' || typeof e.private_key !== 'string') {
      issues.push({ path: `${at}.endpoint`, message: 'cloudC-storage needs either credential (a service-account key file) or client_email and private_key' });
      return;
    }
    try {
      createPrivateKey(e.private_key);
    } catch {
      issues.push({ path: `${at}.endpoint.private_key`, message: 'is not a PEM private key' });
    }
  }
}

/** Every repository named by a log must exist; a log that names one must roll (metrics writes snapshots). */
export function checkLogBackups(setting: Setting, indices: number[], issues: SettingIssue[]): void {
  const list = setting.env.log.repository.list;
  list.forEach((r, i) => checkRepository(r, `env.log.repository.list[${i}]`, issues));
  const repos = new Set(list.map((r) => r.name));
  const check = (names: string[] | undefined, path: string): void => {
    (names ?? []).forEach((n, i) => {
      if (!repos.has(n)) issues.push({ path: `${path}[${i}]`, message: `no repository named "${n}" in env.log.repository.list` });
    });
  };
  const log = setting.env.log;
  for (const k of ['info', 'watch', 'error', 'metrics'] as const) check(log[k].backup, `env.log.${k}.backup`);
  for (const k of ['info', 'watch', 'error'] as const) {
    const l = log[k];
    if (l.enable && l.backup.length > 0 && l.rolling.time === undefined && l.rolling.size === undefined) {
      issues.push({ path: `env.log.${k}.rolling`, message: `the ${k} log is backed up to ${l.backup.join(', ')}; a repository receives rolled files: set rolling.time or rolling.size` });
    }
  }
  const hostLogs = (fn: DeepPartial<Functions> | undefined, base: string): void => {
    const l = fn?.operations?.log;
    if (l === undefined) return;
    for (const k of ['access', 'origin', 'dns', 'monitoring'] as const) check(l[k]?.backup, `${base}.operations.log.${k}.backup`);
  };
  hostLogs(setting.functions, 'functions');
  setting.hosting.forEach((h, i) => {
    const base = `hosting[${indices[i]}].functions`;
    hostLogs(h.functions, base);
    const eff = deepMerge(setting.functions, h.functions).operations.log;
    for (const k of ['access', 'origin', 'dns', 'monitoring'] as const) {
      const l = eff[k];
      if (l.enable && l.backup.length > 0 && l.rolling.time === undefined && l.rolling.size === undefined) {
        issues.push({
          path: `${base}.operations.log.${k}.rolling`,
          message: `host ${h.name} backs its ${k} log up to ${l.backup.join(', ')}; a repository receives rolled files: set rolling.time or rolling.size`,
        });
      }
    }
  });
}
