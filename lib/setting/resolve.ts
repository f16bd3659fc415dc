// From a loaded Setting to what the workers run: hosts with parsed listen and sizes, and their
// functions merged over the global ones.
import path from 'node:path';
import { deepMerge } from './merge.js';
import { parseListen } from './schema/formats.js';
import { parseSize } from './size.js';
import type { HostSetting, ResolvedHost, Setting } from './types.js';

export function resolveHost(setting: Setting, h: HostSetting): ResolvedHost {
  const listen = parseListen(h.listen);
  if (listen === undefined) throw new RangeError(`hosting ${h.name}: invalid listen "${h.listen}"`);
  return {
    name: h.name,
    enable: h.enable,
    listen,
    aliases: h.aliases ?? [],
    mode: {
      volatile: h.mode.volatile,
      nonVolatileSize: parseSize(h.mode.nonVolatileSize),
      facadeHost: h.mode.facadeHost,
      ...(h.mode.basehost === undefined ? {} : { basehost: h.mode.basehost }),
    },
    origin: {
      protocol: h.origin?.protocol ?? 'http',
      address: h.origin?.address ?? [],
      address2: h.origin?.address2 ?? [],
    },
    urlRewrites: h.urlRewrites ?? [],
    fallbacks: h.fallbacks,
    https: h.https ?? [],
    httpsOptions: h.httpsOptions,
    functions: deepMerge(setting.functions, h.functions),
  };
}

/**
 * Every hosting[] entry ready to run, disabled ones included. The basehost of each entry was
 * applied when the setting was parsed (a Setting from parseSetting() carries expanded hosts), so
 * `baseDir` is accepted for callers that pass it and needs no file access here.
 */
export function resolveHosts(setting: Setting, _opts: { baseDir?: string } = {}): ResolvedHost[] {
  return setting.hosting.map((h) => resolveHost(setting, h));
}

/** `p` resolved against env.home (which parseSetting() made absolute). */
export function resolvePath(setting: Setting, p: string): string {
  return path.resolve(setting.env.home, p);
}
