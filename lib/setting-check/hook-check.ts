// Load-time checks of functions.hook on the effective functions of a host (or the global ones):
// the hook URL, its matchingList patterns, and the POST prerequisites of document 2, so a hook
// that cannot work is refused at its JSON path instead of failing requests.
import { compileMatching, HookSettingError, parseHookUrl } from '../hook/rule.js';
import type { SettingIssue } from '../setting/issues.js';
import type { Functions } from '../setting/types.js';

export function checkHook(effective: Functions, base: string, issues: SettingIssue[], hasGeo: boolean): void {
  const hook = effective.hook;
  if (!hook.enable || hook.path === undefined) return;
  const at = `${base}.hook`;
  try {
    parseHookUrl(hook.path, at);
    // Compiling only needs to know whether GeoIP is there (lib/rules/check.ts reports a bad path).
    compileMatching(hook.matchingList, at, hasGeo ? (): undefined => undefined : undefined);
  } catch (err) {
    if (!(err instanceof HookSettingError)) throw err;
    issues.push({ path: err.at, message: err.message });
  }
  const net = effective.network;
  const post = net.cache.cachingKey.postMethod;
  // POSTs the cache does not take (bypassed by method, or passed through as an unsafe method)
  // are not hooked: document 2, "a bypassed POST needs no hooking". Hooked POSTs are the cached
  // ones, and those need the recipe in full.
  if (!post.enable) return;
  const need = 'a hooked POST needs frontEnd.bypass.postMethod.enable false and cachingKey.postMethod {enable: true, bodySensitive: true}';
  if (!post.bodySensitive) {
    issues.push({ path: `${base}.network.cache.cachingKey.postMethod.bodySensitive`, message: `${need}: without it POSTs with different bodies would share one hooked answer` });
  }
  if (net.http.frontEnd.bypass.postMethod.enable) {
    issues.push({ path: `${base}.network.http.frontEnd.bypass.postMethod.enable`, message: need });
  }
}
