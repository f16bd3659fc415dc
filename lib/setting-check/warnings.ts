// Settings that are valid and will be honoured as written, but very likely not as meant. They do
// not refuse the setting (a specification-conformant file must still load): they are returned
// with `svc validate`, in the validate and upload answers, and written to the info log.
import { isPlainObject } from '../setting/merge.js';
import { traceKeywordWarning } from '../rules/check.js';
import type { Setting } from '../setting/types.js';

/**
 * Document 2 gives discovery only `port` and `members`; this build runs it only with its own
 * `enable: true` and a `secret` (advertisements are signed). A file that names the
 * specification's fields and leaves `enable` out expects discovery and would get none. An
 * explicit `enable: false` is a choice and is not warned about. Reads the file as written
 * (`raw`): the defaulted setting cannot tell a written field from a default.
 */
function discoverWarning(raw: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    return undefined;
  }
  let d: unknown = doc;
  for (const k of ['env', 'management', 'cluster', 'discover']) d = isPlainObject(d) ? d[k] : undefined;
  if (!isPlainObject(d) || d.enable !== undefined || (d.port === undefined && d.members === undefined)) return undefined;
  return 'env.management.cluster.discover: discovery is off: port and members alone do not start it; '
    + 'this build also needs enable: true and a shared secret (advertisements are signed); add them, or set enable: false';
}

export function settingWarnings(setting: Setting, raw: string): string[] {
  return [traceKeywordWarning(setting), discoverWarning(raw)].filter((w): w is string => w !== undefined);
}
