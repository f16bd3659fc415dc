// Fleet settings a schema cannot judge: cloud dynamic members (no resolver in this build, so a
// member of that form would be accepted and never reached), discovery without its secret, and
// a Redis bus URL that ioredis could not read. Validation and upload run these same checks.
// Cloud dynamic origin addresses (hosting[].origin) are refused by the same rule: the origin
// set cannot resolve them either, and without this check they passed validation and were
// refused only when an upload reached the workers.
import type { SettingIssue } from '../setting/issues.js';
import type { Setting } from '../setting/types.js';

const CLOUD = /^#cloud/;

export function refuseCloud(list: readonly string[] | null | undefined, base: string, issues: SettingIssue[], what: 'member' | 'origin' = 'member'): void {
  const instead = what === 'member' ? 'list the node IPs' : 'list the origin IPs or domain names';
  (list ?? []).forEach((m, i) => {
    if (CLOUD.test(m)) {
      issues.push({ path: `${base}[${i}]`, message: `cloud dynamic ${what} "${m}" is not supported by this build (no cloud resolver): ${instead}` });
    }
  });
}

export function checkFleet(setting: Setting, issues: SettingIssue[]): void {
  const cluster = setting.env.management.cluster;
  const discover = cluster.discover;
  refuseCloud(discover.members, 'env.management.cluster.discover.members', issues);
  if (discover.enable && discover.secret === '') {
    issues.push({ path: 'env.management.cluster.discover.secret', message: 'discovery needs a shared secret: advertisements are signed with HMAC-SHA256 and unsigned ones are dropped' });
  }
  if (discover.enable && discover.period <= 0) {
    issues.push({ path: 'env.management.cluster.discover.period', message: 'must be above 0 seconds' });
  }
  const propagation = setting.env.management.server.events.onPurgeRequest.propagation;
  refuseCloud(propagation.nodelist, 'env.management.server.events.onPurgeRequest.propagation.nodelist', issues);
  const bus = cluster.bus;
  if (bus.enable) {
    let url: URL | undefined;
    try { url = new URL(bus.url); } catch { /* reported below */ }
    if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) {
      issues.push({ path: 'env.management.cluster.bus.url', message: `must be a redis:// or rediss:// URL (got ${JSON.stringify(bus.url)})` });
    }
  }
}
