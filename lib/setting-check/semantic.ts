// Rules across members that a schema cannot state: references by name, port clashes, version
// order. They run on the defaulted setting; each reports at the JSON path of the member to fix.
import { type SettingIssue } from '../setting/issues.js';
import { deepMerge, isPlainObject } from '../setting/merge.js';
import { parseListen, parseTlsListen } from '../setting/schema/formats.js';
import { checkHttpsOptions, sameTlsOptions } from '../tls/options.js';
import { TLS_VERSIONS } from '../setting/schema/management.js';
import { checkTagged } from '../setting/tagged.js';
import { checkCentral } from './central-check.js';
import { checkLogBackups } from './log-backups.js';
import { parseCron } from '../log/cron.js';
import { compileNetwork, RuleError } from '../network/rules.js';
import { compileFallbacks } from '../network/fallbacks.js';
import { checkRules } from '../rules/check.js';
import { checkHook } from './hook-check.js';
import { checkPagedesk } from '../pagedesk/setting.js';
import { checkFleet, refuseCloud } from './fleet-check.js';
import type { DeepPartial, Functions, HostSetting, Setting } from '../setting/types.js';

function checkApi(setting: Setting, issues: SettingIssue[]): void {
  const api = setting.env.management.api;
  const base = 'env.management.api';
  const roles = new Set<string>();
  api.roles.forEach((r, i) => {
    if (roles.has(r.name)) issues.push({ path: `${base}.roles[${i}].name`, message: `duplicate role name "${r.name}"` });
    roles.add(r.name);
  });
  if (!roles.has(api.defaultRole)) issues.push({ path: `${base}.defaultRole`, message: `no role named "${api.defaultRole}"` });
  (api.allowList ?? []).forEach((a, i) => {
    if (a.role !== undefined && !roles.has(a.role)) {
      issues.push({ path: `${base}.allowList[${i}].role`, message: `no role named "${a.role}"` });
    }
  });
  const https = api.https;
  if (https === undefined) return;
  const o = https.options;
  if (TLS_VERSIONS.indexOf(o.maxVersion) < TLS_VERSIONS.indexOf(o.minVersion)) {
    issues.push({ path: `${base}.https.options.maxVersion`, message: `${o.maxVersion} is below minVersion ${o.minVersion}` });
  }
  const listen = o.listen === undefined ? undefined : parseListen(o.listen);
  if (listen && listen.port === api.port && o.enableHttp) {
    issues.push({
      path: `${base}.https.options.listen`,
      message: `port ${listen.port} is env.management.api.port; set enableHttp to false or use another port`,
    });
  }
}

/** Hook and other function rules, on a host's own functions (`own`) with the effective ones. */
function checkFunctions(own: DeepPartial<Functions> | undefined, effective: Functions, base: string, issues: SettingIssue[]): void {
  if (own?.contents?.pagedesk !== undefined) issues.push(...checkPagedesk(effective.contents.pagedesk, base));
  const cache = effective.network.cache;
  if (cache.limitMaxRange > 0 && cache.partSize > cache.limitMaxRange && (own?.network?.cache?.partSize !== undefined || own?.network?.cache?.limitMaxRange !== undefined)) {
    // A piece longer than the object it splits would make every stored-in-pieces object one piece.
    issues.push({ path: `${base}.network.cache.partSize`, message: `${cache.partSize} is above limitMaxRange ${cache.limitMaxRange}; a piece must not be longer than the objects stored in pieces` });
  }
  const hook = own?.hook;
  if (hook === undefined) return;
  if (hook.enable === true && effective.hook.path === undefined) {
    issues.push({ path: `${base}.hook.path`, message: 'required when the hook is enabled' });
  }
  const param = hook.session?.param;
  if (typeof param === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(param);
    } catch {
      parsed = undefined;
    }
    if (!isPlainObject(parsed)) issues.push({ path: `${base}.hook.session.param`, message: 'must be a serialised JSON object' });
  }
}

/** The network rules (bypass, modify, cachingKey) compile as the workers will compile them. */
function checkNetwork(setting: Setting, own: DeepPartial<Functions> | undefined, effective: Functions, base: string, issues: SettingIssue[]): void {
  if (own?.network === undefined) return;
  // Compiling only needs to know whether GeoIP is there (lib/rules/check.ts reports a bad path).
  const geo = setting.env.geoip.path === null ? undefined : (): undefined => undefined;
  try {
    compileNetwork(effective.network, base, geo);
  } catch (err) {
    if (!(err instanceof RuleError)) throw err;
    issues.push({ path: err.path, message: err.message });
  }
}

const SERVICE_CODE_WORDS = ['#LAST', '#FIRST', '#BEFORE'];

function checkHost(h: HostSetting, i: number, names: Set<string>, setting: Setting, issues: SettingIssue[]): void {
  const base = `hosting[${i}]`;
  const facade = h.mode.facadeHost;
  if (facade !== null && (facade === h.name || !names.has(facade))) {
    issues.push({ path: `${base}.mode.facadeHost`, message: `"${facade}" is not another host of hosting[]` });
  } else if (facade !== null && setting.hosting.some((o) => o.name === facade && o.mode.facadeHost !== null)) {
    issues.push({ path: `${base}.mode.facadeHost`, message: `"${facade}" is itself a facade: name the host that serves` });
  }
  h.fallbacks.matchingList.forEach((m, k) => {
    const c = m.serviceCode;
    const path = `${base}.fallbacks.matchingList[${k}].serviceCode`;
    if (typeof c === 'string' && !SERVICE_CODE_WORDS.includes(c)) {
      issues.push({ path, message: `must be #LAST, #FIRST, #BEFORE or a status code, got "${c}"` });
    } else if (typeof c === 'number' && (c < 200 || c > 599 || c === 206 || (c >= 300 && c < 400))) {
      issues.push({ path, message: `status code ${c} cannot be a service code (1xx, 206 and 3xx are not allowed)` });
    }
  });
  refuseCloud(h.origin?.address, `${base}.origin.address`, issues, 'origin');
  refuseCloud(h.origin?.address2, `${base}.origin.address2`, issues, 'origin');
  const listen = parseListen(h.listen);
  const api = setting.env.management.api.port;
  if (listen && (listen.port === api || listen.port === api - 1)) {
    issues.push({
      path: `${base}.listen`,
      message: `port ${listen.port} is reserved for the management API (${api}) and the RT control port (${api - 1})`,
    });
  }
  try {
    compileFallbacks(h.fallbacks, base);
  } catch (err) {
    if (!(err instanceof RuleError)) throw err;
    issues.push({ path: err.path, message: err.message });
  }
  const effective = deepMerge(setting.functions, h.functions);
  checkFunctions(h.functions, effective, `${base}.functions`, issues);
  checkNetwork(setting, h.functions, effective, `${base}.functions`, issues);
  // The global hook is checked once (below); a host is checked when its own functions change it.
  if (h.functions?.hook !== undefined || h.functions?.network !== undefined) checkHook(effective, `${base}.functions`, issues, setting.env.geoip.path !== null);
}

const URL_SOURCE = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * TLS service rules of the enabled hosts with https[]: options this build can honour, URL
 * sources that can be fetched (http, https), one set of options per TLS port (one socket serves all its hosts),
 * and a port is either plain or TLS.
 */
function checkTls(setting: Setting, indices: number[], issues: SettingIssue[]): void {
  const plainPorts = new Map<number, number>();
  setting.hosting.forEach((h, i) => {
    const l = h.enable ? parseListen(h.listen) : null;
    if (l) plainPorts.set(l.port, indices[i]!);
  });
  const firstOnPort = new Map<number, { index: number; h: HostSetting }>();
  const api = setting.env.management.api.port;
  setting.hosting.forEach((h, i) => {
    if (!h.enable || (h.https ?? []).length === 0) return;
    const base = `hosting[${indices[i]}]`;
    issues.push(...checkHttpsOptions(h.httpsOptions, `${base}.httpsOptions`));
    (h.https ?? []).forEach((e, j) => {
      for (const k of ['cert', 'key', 'ca'] as const) {
        const src = e[k];
        if (src !== undefined && URL_SOURCE.test(src) && !/^https?:\/\//i.test(src)) {
          issues.push({ path: `${base}.https[${j}].${k}`, message: 'only http:// and https:// URLs can be fetched: give such a URL or a file path' });
        }
      }
    });
    const l = parseTlsListen(h.httpsOptions.listen);
    if (l === undefined) return;
    const path = `${base}.httpsOptions.listen`;
    const plain = plainPorts.get(l.port);
    if (plain !== undefined) {
      issues.push({ path, message: `port ${l.port} is the plain listen of hosting[${plain}]: a port serves either plain HTTP or TLS` });
    }
    if (l.port === api || l.port === api - 1) {
      issues.push({ path, message: `port ${l.port} is reserved for the management API (${api}) and the RT control port (${api - 1})` });
    }
    const first = firstOnPort.get(l.port);
    if (first === undefined) firstOnPort.set(l.port, { index: indices[i]!, h });
    else if (!sameTlsOptions(first.h.httpsOptions, h.httpsOptions)) {
      issues.push({
        path: `${base}.httpsOptions`,
        message: `hosts sharing TLS port ${l.port} must have the same TLS versions, ciphersuite and forwardSecrecy (hosting[${first.index}] differs): one socket negotiates for all of them`,
      });
    }
  });
}

/**
 * The metrics log's cron reads numbers, ranges, steps and lists (lib/log/cron.ts); a
 * schedule the schema lets through in another cron dialect is refused rather than misread.
 */
function checkMetricsSchedule(setting: Setting, issues: SettingIssue[]): void {
  const s = setting.env.log.metrics.schedule;
  if (typeof s !== 'string' || ![5, 6].includes(s.trim().split(/\s+/).length)) return;
  try {
    parseCron(s);
  } catch (err) {
    issues.push({ path: 'env.log.metrics.schedule', message: `${(err as Error).message} (names and the L, W and # forms are not supported)` });
  }
}

/**
 * Runs every rule; a rule that meets a value of the wrong type leaves it to the schema report.
 * `hosts` tells where each of setting.hosting sits in the file and every name the file gives.
 */
export function checkSemantics(setting: Setting, hosts: { indices: number[]; names: Set<string> }, issues: SettingIssue[]): void {
  const rules: (() => void)[] = [
    () => checkApi(setting, issues),
    () => checkTagged(setting, issues),
    () => checkCentral(setting, issues),
    () => checkLogBackups(setting, hosts.indices, issues),
    () => checkMetricsSchedule(setting, issues),
    () => checkFunctions(setting.functions, setting.functions, 'functions', issues),
    () => checkNetwork(setting, setting.functions, setting.functions, 'functions', issues),
    () => checkHook(setting.functions, 'functions', issues, setting.env.geoip.path !== null),
    () => checkTls(setting, hosts.indices, issues),
    () => checkRules(setting, hosts.indices, issues),
    () => checkFleet(setting, issues),
  ];
  setting.hosting.forEach((h, i) => rules.push(() => checkHost(h, hosts.indices[i]!, hosts.names, setting, issues)));
  for (const rule of rules) {
    try {
      rule();
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
    }
  }
}
