// What this build can run of env.management.server (lib/primary/central): transports that need
// a vendor SDK and its network (cloudCdoc documents of a cloudCPubsub connection, cloudB) are
// refused rather than accepted and ignored, every schedule must be one lib/log/cron.ts reads, and
// the backup needs a bucket and an http(s) endpoint when one is given.
import { type SettingIssue } from '../setting/issues.js';
import { parseCron } from '../log/cron.js';
import type { Setting } from '../setting/types.js';

const NO_CLOUDC = 'cloudCdoc is not supported by this build: it needs the vendor SDK and its network (cloudCPubsub)';
const NO_CLOUDB = 'cloudB is not supported by this build: needs the vendor SDK';

export function checkCentral(setting: Setting, issues: SettingIssue[]): void {
  const server = setting.env.management.server;
  const f = server.features;
  const base = 'env.management.server.features';
  const refuse = (type: string | undefined, bad: string, path: string, message: string): void => {
    if (type === bad) issues.push({ path, message });
  };
  refuse(f.setting.feed?.type, 'cloudCdoc', `${base}.setting.feed.type`, NO_CLOUDC);
  refuse(f.setting.feedback?.type, 'cloudCdoc', `${base}.setting.feedback.type`, NO_CLOUDC);
  refuse(f.heartbeat.feedback?.type, 'cloudCdoc', `${base}.heartbeat.feedback.type`, NO_CLOUDC);
  refuse(f.nodelist.feed?.type, 'cloudB', `${base}.nodelist.feed.type`, NO_CLOUDB);

  const schedule = (info: Record<string, unknown> | undefined, path: string): void => {
    const s = info?.schedule;
    if (typeof s !== 'string') return;
    try {
      parseCron(s);
    } catch (err) {
      issues.push({ path: `${path}.info.schedule`, message: `${(err as Error).message} (names and the L, W and # forms are not supported)` });
    }
  };
  schedule(f.setting.feed?.info, `${base}.setting.feed`);
  schedule(f.purge.feed?.info, `${base}.purge.feed`);
  schedule(f.heartbeat.feedback?.info, `${base}.heartbeat.feedback`);
  schedule(f.nodelist.feed?.info, `${base}.nodelist.feed`);

  (server.connection ?? []).forEach((c, i) => {
    const endpoint = (c.info as { endpoint?: unknown }).endpoint;
    if (typeof endpoint === 'string' && !/^https?:\/\/[^/]/i.test(endpoint)) {
      issues.push({ path: `env.management.server.connection[${i}].info.endpoint`, message: 'must be an http:// or https:// URL' });
    }
  });
  const backup = server.events.onSettingLoad.backup;
  const conn = (server.connection ?? []).find((c) => c.name === backup.connect && c.type === 'httpCloudASig4');
  if (backup.enable && conn !== undefined && (conn.info as { bucket?: unknown }).bucket === '') {
    issues.push({ path: 'env.management.server.events.onSettingLoad.backup.connect', message: `connection "${conn.name}" has no bucket to back up to` });
  }
}
