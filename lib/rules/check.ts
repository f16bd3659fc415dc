// Validation of the request rules: every pattern is compiled as the workers will compile it, so
// a bad regex, an unknown condition or a country code without GeoIP refuses the setting at the
// JSON path of the pattern. Redirect entries need a location and a redirect status.
import type { SettingIssue } from '../setting/issues.js';
import type { DeepPartial, Functions, Setting } from '../setting/types.js';
import { ACCESS_REDIRECT_CODES } from '../setting/schema/access-control.js';
import { compilePattern, type CountryLookup } from './conditions.js';
import { checkGeoIp } from './geoip.js';
import { resolvePath } from '../setting/resolve.js';

/** A lookup that answers nothing: compiling only needs to know GeoIP is there. */
const NO_COUNTRY: CountryLookup = () => undefined;

function geoAtValidation(setting: Setting, issues: SettingIssue[]): CountryLookup | undefined {
  const p = setting.env.geoip.path;
  if (p === null) return undefined;
  try {
    if (checkGeoIp(resolvePath(setting, p)).length === 0) {
      issues.push({ path: 'env.geoip.path', message: `${resolvePath(setting, p)} holds no .mmdb database` });
      return undefined;
    }
  } catch (err) {
    issues.push({ path: 'env.geoip.path', message: (err as Error).message });
    return undefined;
  }
  return NO_COUNTRY;
}

function checkAccess(fn: DeepPartial<Functions> | undefined, base: string, geo: CountryLookup | undefined, issues: SettingIssue[]): void {
  const ac = fn?.network?.http?.frontEnd?.accessControl;
  if (ac === undefined) return;
  const at = `${base}.network.http.frontEnd.accessControl`;
  (ac.matchingList ?? []).forEach((e, k) => {
    if (e === undefined) return;
    const path = `${at}.matchingList[${k}]`;
    try {
      compilePattern(e.pattern ?? '', { caseSensitive: ac.caseSensitive ?? true, allowUrl: true, geo });
    } catch (err) {
      issues.push({ path: `${path}.pattern`, message: (err as Error).message });
    }
    if (e.action === 'redirect') {
      if (e.location === undefined) issues.push({ path: `${path}.location`, message: 'required when action is redirect' });
      else if (!/^[\x21-\x7e]+$/.test(e.location)) issues.push({ path: `${path}.location`, message: 'must be a URL of visible ASCII characters (percent-encode the others)' });
      if (e.status !== undefined && !ACCESS_REDIRECT_CODES.includes(e.status)) {
        issues.push({ path: `${path}.status`, message: `must be one of ${ACCESS_REDIRECT_CODES.join(', ')}` });
      }
    } else if (e.location !== undefined) {
      issues.push({ path: `${path}.location`, message: 'only a redirect entry has a location' });
    }
  });
}

export function checkRules(setting: Setting, indices: number[], issues: SettingIssue[]): void {
  const geo = geoAtValidation(setting, issues);
  checkAccess(setting.functions, 'functions', geo, issues);
  setting.hosting.forEach((h, i) => {
    const base = `hosting[${indices[i]}]`;
    (h.urlRewrites ?? []).forEach((r, k) => {
      try {
        compilePattern(r.pattern, { caseSensitive: r.caseSensitive, allowUrl: true, geo });
      } catch (err) {
        issues.push({ path: `${base}.urlRewrites[${k}].pattern`, message: (err as Error).message });
      }
      if (!/^[\x21-\x7e]+$/.test(r.replace)) {
        issues.push({ path: `${base}.urlRewrites[${k}].replace`, message: 'must be a URL of visible ASCII characters (percent-encode the others)' });
      }
    });
    checkAccess(h.functions, `${base}.functions`, geo, issues);
  });
}

/** The info-log warning of a setting that traces with the default keyword (document 2). */
export function traceKeywordWarning(setting: Setting): string | undefined {
  const t = setting.meta.settingTrace;
  if (!t.enable || t.keyword !== '_trace_') return undefined;
  return 'meta.settingTrace is enabled with the default keyword _trace_: anyone who knows it can read the matching rules; change meta.settingTrace.keyword';
}
