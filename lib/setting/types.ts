// Static types of the setting. `Setting` is setting.json after loading: every member with a
// default of the spec (or of ours) is present; members without a default are optional.
import type { Static } from 'typebox';
import type { FunctionsSchema, HostSchema, SettingSchema } from './schema/index.js';

export type { DeepPartial } from './schema/partial.js';

/** The whole setting.json, defaults applied, hosts expanded from their basehost. */
export type Setting = Static<typeof SettingSchema>;
export type Env = Setting['env'];
export type ManagementApi = Env['management']['api'];
type Role = ManagementApi['roles'][number];
export type Permissions = Role['permissions'];

/** `functions` of the top level, every member present. */
export type Functions = Static<typeof FunctionsSchema>;

/** A hosting[] entry of `Setting`: basehost applied, host defaults filled, own functions partial. */
export type HostSetting = Static<typeof HostSchema>;
type UrlRewrite = NonNullable<HostSetting['urlRewrites']>[number];
type Fallbacks = HostSetting['fallbacks'];
export type HttpsCert = NonNullable<HostSetting['https']>[number];
export type HttpsOptions = HostSetting['httpsOptions'];

/** Where a service socket listens; host null means every address. */
export interface Listen { host: string | null; port: number }

/**
 * A virtual host ready to run: what resolveHosts() returns for each hosting[] entry, disabled
 * hosts included (the caller filters on `enable`).
 */
export interface ResolvedHost {
  name: string;
  enable: boolean;
  /** The parsed `listen`; null for `off` (no service port). */
  listen: Listen | null;
  /** Alias names, possibly with a leading wildcard label; [] when none. */
  aliases: string[];
  mode: {
    volatile: boolean;
    /** `mode.nonVolatileSize` in bytes. */
    nonVolatileSize: number;
    facadeHost: string | null;
    /** The basehost the entry was expanded from, as written. */
    basehost?: string;
  };
  /** Origin servers; address lists are [] when the file gives none. */
  origin: { protocol: 'http' | 'https'; address: string[]; address2: string[] };
  /** URL preprocessing rules in order; [] when none. */
  urlRewrites: UrlRewrite[];
  fallbacks: Fallbacks;
  /** Certificates; [] when the host serves no TLS. */
  https: HttpsCert[];
  /** TLS service options, defaults filled (`listen` as written, default `*:443`). */
  httpsOptions: HttpsOptions;
  /** The global functions with the host's own functions merged over them member by member. */
  functions: Functions;
}
