// Evaluation of a `/get` query against a QuerySource: the one module behind both the API routes
// (running node) and `svc get` (a setting file). Outcomes carry the HTTP status decided for the
// meanings of document 1: 200 success, 400 bad call (malformed query), 404 no corresponding
// setting / no hosting / no HTTPS service / unknown query, 500 the setting could not be loaded,
// 503 some HTTPS service not working.
import type { LicenseInfo } from '../license/service.js';
import { deepMerge, isPlainObject } from '../setting/merge.js';
import type { Functions, HostSetting, Setting } from '../setting/types.js';
import { checkHttps, type ServedTls } from './https.js';
import { isCoded } from '../errors/codes.js';
import { describe, parseQuery, type Query, type Step } from './selector.js';

/** Item of `/get/discover` (document 1, "Node advertisement"). */
export interface DiscoverEntry {
  address: string;
  advertisement: { signature: string; name: string; version: string; buildNumber: string; settingHash: string };
  /** Epoch milliseconds. */
  lastSeen: number;
}

/** What the queries read. On a node: SettingLifecycle (running, artifact) and discovery. */
export interface QuerySource {
  /** The running setting; may throw when it cannot be loaded (500). */
  running(): Setting;
  /** The setting waiting for a restart, or undefined when there is none. */
  artifact(): Setting | undefined;
  discover(): DiscoverEntry[];
  /** The license information, when the source has a license service (`svc get license`). */
  license?(): LicenseInfo;
  /** On a running node: what each worker serves over TLS (rejects when the workers cannot say). */
  servedTls?(): Promise<ServedTls>;
}

export interface QueryOutcome {
  status: 200 | 400 | 404 | 500 | 503;
  result: unknown;
  /** Why the query failed; null on success. */
  reason: string | null;
}

/** `/get/hosting` item. */
interface HostingSummary {
  name: string;
  origin: string[];
  functions: string[];
}

const failed = (status: QueryOutcome['status'], reason: string, result: unknown = null): QueryOutcome => ({ status, result, reason });

/** Follows the steps from `root`; a step that names nothing gives the path that was not found. */
function walk(root: unknown, steps: readonly Step[], rootName: string): { found: true; value: unknown } | { found: false; missing: string } {
  let v = root;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    const missing = (): { found: false; missing: string } => ({ found: false, missing: describe(rootName, steps.slice(0, i + 1)) });
    if (s.kind === 'member') {
      if (!isPlainObject(v) || !Object.hasOwn(v, s.name)) return missing();
      v = v[s.name];
    } else if (!Array.isArray(v)) {
      return missing();
    } else if (s.kind === 'index') {
      if (s.index >= v.length) return missing();
      v = v[s.index];
    } else {
      const hit = v.find((e) => isPlainObject(e) && e.name === s.name);
      if (hit === undefined) return missing();
      v = hit;
    }
  }
  return { found: true, value: v };
}

/**
 * Names of the functions a host runs, from its functions merged over the global ones: the
 * members of `functions` that are switched on as a whole. `hook` (functions.hook.enable) and
 * `pagedesk` (functions.contents.pagedesk.meta.enable) are the ones the schema has; the network
 * settings and logs are not functions one turns on, so they are not listed.
 */
function functionNames(setting: Setting, h: HostSetting): string[] {
  const f = deepMerge<Functions>(setting.functions, h.functions);
  const names: string[] = [];
  if (f.hook?.enable === true) names.push('hook');
  if (f.contents?.pagedesk?.meta?.enable === true) names.push('pagedesk');
  return names;
}

function hostingSummary(setting: Setting, h: HostSetting): HostingSummary {
  return { name: h.name, origin: [...(h.origin?.address ?? [])], functions: functionNames(setting, h) };
}

function loadRunning(src: QuerySource): { setting: Setting } | { error: QueryOutcome } {
  try {
    return { setting: src.running() };
  } catch (err) {
    return { error: failed(500, `the setting could not be loaded: ${(err as Error).message}`) };
  }
}

function settingQuery(q: Extract<Query, { target: 'setting' }>, src: QuerySource): QueryOutcome {
  let setting: Setting | undefined;
  if (q.form === 'artifact') {
    try {
      setting = src.artifact();
    } catch (err) {
      return failed(500, `the setting could not be loaded: ${(err as Error).message}`);
    }
    if (setting === undefined) return failed(404, 'no artifact: no setting is waiting for a restart');
  } else {
    const r = loadRunning(src);
    if ('error' in r) return r.error;
    setting = r.setting;
  }
  const root = q.form === 'artifact' ? 'setting/artifact' : 'setting';
  const w = walk(setting, q.steps, root);
  if (!w.found) return failed(404, `no corresponding setting: ${w.missing}`);
  return { status: 200, result: w.value, reason: null };
}

function hostingQuery(q: Extract<Query, { target: 'hosting' }>, src: QuerySource): QueryOutcome {
  const r = loadRunning(src);
  if ('error' in r) return r.error;
  const { setting } = r;
  if (setting.hosting.length === 0) return failed(404, 'no hosting');
  if (q.select === undefined) return { status: 200, result: setting.hosting.map((h) => hostingSummary(setting, h)), reason: null };
  const w = walk(setting.hosting, [q.select], 'hosting');
  if (!w.found) return failed(404, `no hosting ${w.missing.slice('hosting'.length)}`);
  return { status: 200, result: [hostingSummary(setting, w.value as HostSetting)], reason: null };
}

/** Runs a query (text or parsed). Never throws for a bad query: the outcome says why. */
export async function runQuery(query: string | Query, src: QuerySource, opts: { now?: number } = {}): Promise<QueryOutcome> {
  let q: Query;
  try {
    q = typeof query === 'string' ? parseQuery(query) : query;
  } catch (err) {
    if (isCoded(err, 'QUERY_BAD', 'QUERY_UNKNOWN')) return failed(err.status, err.message);
    throw err;
  }
  switch (q.target) {
    case 'setting':
      return settingQuery(q, src);
    case 'hosting':
      return hostingQuery(q, src);
    case 'https': {
      const r = loadRunning(src);
      if ('error' in r) return r.error;
      const served = src.servedTls === undefined ? undefined : await src.servedTls().catch((err: Error) => err);
      const report = await checkHttps(r.setting, opts.now, served);
      return { status: report.status, result: report.result, reason: report.reason };
    }
    case 'discover':
      return { status: 200, result: src.discover(), reason: null };
    case 'license':
      if (src.license === undefined) return failed(404, 'no license service');
      return { status: 200, result: src.license(), reason: null };
  }
}
