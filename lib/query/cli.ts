// `svc get QUERY [--setting PATH] [--api URL]`: the command-line counterpart of `/get`.
// Offline it evaluates the query on a setting file with the same module as the API; with --api
// it asks a running node (`GET <URL>/get/<QUERY>`). Either way the result is printed as JSON on
// stdout; a failure prints its reason on stderr (and the result, when it has one, e.g. the
// broken services of `https`). Exit code 0 on success, 1 on a failed query, 2 on bad usage.
import { LicenseService, licensePaths } from '../license/service.js';
import { loadSettingFile } from '../setting-check/load.js';
import { SettingError } from '../setting/issues.js';
import type { Setting } from '../setting/types.js';
import { runQuery, type QueryOutcome, type QuerySource } from './evaluate.js';
import { normaliseQuery } from './selector.js';

export interface GetOptions {
  /** The setting file read offline. */
  settingPath: string;
  /** Base URL of a running node's management API; when set, the node is asked instead. */
  api?: string;
}

/** A QuerySource over one loaded setting file: it is the running setting and there is no artifact. */
function fileSource(setting: Setting, license?: LicenseService): QuerySource {
  return {
    running: () => setting,
    artifact: () => undefined,
    discover: () => [],
    ...(license === undefined ? {} : { license: () => license.current() }),
  };
}

/** Evaluates `query` on the setting file (offline). A file that does not load is the 500 outcome. */
export async function queryFile(query: string, settingPath: string): Promise<QueryOutcome> {
  let setting: Setting;
  try {
    setting = (await loadSettingFile(settingPath)).setting;
  } catch (err) {
    const detail = err instanceof SettingError ? err.issues.map((i) => `${i.path || '(file)'}: ${i.message}`).join('; ') : (err as Error).message;
    return { status: 500, result: null, reason: `the setting could not be loaded: ${detail}` };
  }
  const license = normaliseQuery(query) === 'license' ? await LicenseService.open(licensePaths(setting)) : undefined;
  return runQuery(query, fileSource(setting, license));
}

/** Asks a running node; the envelope's members become the outcome. */
async function queryApi(query: string, api: string): Promise<QueryOutcome> {
  const url = `${api.replace(/\/+$/, '')}/get/${encodeURI(normaliseQuery(query))}`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    return { status: 503, result: null, reason: `cannot reach ${url}: ${(err as Error).cause ?? (err as Error).message}` };
  }
  const text = await res.text();
  let body: { result?: unknown; reason?: string | null };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { status: 500, result: null, reason: `${url} answered ${res.status} with a body that is not JSON` };
  }
  return { status: res.status as QueryOutcome['status'], result: body.result ?? null, reason: res.status === 200 ? null : body.reason ?? `HTTP ${res.status}` };
}

export async function getCommand(query: string, o: GetOptions, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const r = o.api === undefined ? await queryFile(query, o.settingPath) : await queryApi(query, o.api);
  if (r.status === 200 || r.result !== null) out(`${JSON.stringify(r.result, null, 2)}\n`);
  if (r.status !== 200) {
    err(`${r.status}: ${r.reason ?? 'failed'}\n`);
    return 1;
  }
  return 0;
}
