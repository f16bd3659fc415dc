// functions.hook compiled once per setting load: which requests it selects (matchingList), what
// it skips, the parsed session.param, and the keep-alive client that calls it (an OriginSet: an
// undici pool with the session timeouts, traced like an origin so the calls reach the origin log).
import { OriginSet } from '../origin/index.js';
import { compilePattern, type CompiledPattern, type CountryLookup } from '../rules/conditions.js';

interface HookSetting {
  enable: boolean;
  path?: string | undefined;
  skipIfMatched: { accessControl: boolean; bypass: boolean };
  matchingList: { pattern: string }[] | null;
  methodSwitchable: boolean;
  session: { connectTimeout: number; receiveTimeout: number; reuseTimeout: number; param: string | null };
  log: { enable: boolean };
}

export interface HookRule {
  /** undefined: every request is selected. */
  readonly matching: readonly CompiledPattern[] | undefined;
  readonly skipAccess: boolean;
  readonly skipBypass: boolean;
  readonly methodSwitchable: boolean;
  /** session.param unescaped (an object), null when none. */
  readonly param: unknown;
  readonly log: boolean;
  /** Path and query of the hook URL. */
  readonly path: string;
  /**
   * The whole exchange with the hook, from the call to the answer's last byte:
   * session.connectTimeout + session.receiveTimeout. receiveTimeout alone bounds the wait for the
   * head and between two chunks, so a hook trickling its answer would hold the client forever;
   * a hook that connects in time and answers whole within receiveTimeout always fits.
   */
  readonly deadlineMs: number;
  readonly client: OriginSet;
}

export class HookSettingError extends Error {
  constructor(readonly at: string, message: string) { super(message); }
}

/** The hook URL split for the client; throws HookSettingError. */
export function parseHookUrl(path: string, at: string): { protocol: 'http' | 'https'; hostname: string; address: string; url: string } {
  let u: URL;
  try {
    u = new URL(path);
  } catch {
    throw new HookSettingError(`${at}.path`, `"${path}" is not an absolute http(s) URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new HookSettingError(`${at}.path`, `"${path}": the hook is called over http or https`);
  if (u.username !== '' || u.password !== '') throw new HookSettingError(`${at}.path`, 'credentials in the hook URL are not supported');
  return { protocol: u.protocol === 'https:' ? 'https' : 'http', hostname: u.hostname, address: u.host, url: `${u.pathname}${u.search}` };
}

/** Patterns of matchingList; throws HookSettingError at the entry's path. */
export function compileMatching(list: HookSetting['matchingList'], at: string, geo: CountryLookup | undefined): CompiledPattern[] | undefined {
  if (list === null) return undefined;
  return list.map((m, i) => {
    try {
      return compilePattern(m.pattern, { caseSensitive: false, allowUrl: true, geo });
    } catch (err) {
      throw new HookSettingError(`${at}.matchingList[${i}].pattern`, (err as Error).message);
    }
  });
}

/** The running hook of a host, undefined when disabled. `at`: the JSON path for errors. */
export function compileHook(s: HookSetting, at: string, geo: CountryLookup | undefined): HookRule | undefined {
  if (!s.enable || s.path === undefined) return undefined;
  const target = parseHookUrl(s.path, at);
  const matching = compileMatching(s.matchingList, at, geo);
  return {
    matching,
    skipAccess: s.skipIfMatched.accessControl,
    skipBypass: s.skipIfMatched.bypass,
    methodSwitchable: s.methodSwitchable,
    param: s.session.param === null ? null : JSON.parse(s.session.param) as unknown,
    log: s.log.enable,
    path: target.url,
    deadlineMs: (s.session.connectTimeout + s.session.receiveTimeout) * 1000,
    client: new OriginSet({
      vhost: target.hostname,
      protocol: target.protocol,
      address: [target.address],
      address2: [],
      connectTimeoutMs: s.session.connectTimeout * 1000,
      receiveTimeoutMs: s.session.receiveTimeout * 1000,
      keepAliveTimeoutMs: s.session.reuseTimeout * 1000,
      // A hook is one service: it is called again at once when it answers again (no Inactive
      // period hiding a recovered hook for recoveryInterval).
      failCount: Number.MAX_SAFE_INTEGER,
    }),
  };
}
