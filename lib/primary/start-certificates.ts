// The certificates of the setting a node starts with must serve: a bad one refuses the start at
// its JSON path rather than every worker failing to open its TLS port. URL sources are fetched
// first; one that cannot be fetched keeps its copy from before (with a warning).
import { certRefs } from '../lifecycle/package.js';
import { installUrlSources } from '../lifecycle/url-sources.js';
import { systemLog } from '../log/system-log.js';
import { SettingError } from '../setting/issues.js';
import type { Setting } from '../setting/types.js';
import { certIssues, homeFiles } from '../tls/certificates.js';

export async function checkStartCertificates(setting: Setting): Promise<void> {
  const unfetched = await installUrlSources(certRefs(setting, setting.env.home), undefined, true);
  if (unfetched.length > 0) systemLog.warn({ issues: unfetched }, 'certificate URLs not fetched; their copies from before are used');
  const certs = certIssues(setting, () => homeFiles(setting));
  if (certs.length > 0) throw new SettingError(certs);
}
