// `/monitoring/geoiplist`: the MaxMind databases of the configured GeoIP directory.
// Document 1 shows no setting for that directory; it is `env.geoip.path` (default null), the
// directory the access-control and rewrite conditions read country codes from (lib/rules/geoip.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Setting } from '../../setting/types.js';
import { ApiError, HTTP } from '../envelope.js';

export interface GeoIpList { path: string; files: Array<{ file: string; size: number }> }

/** The configured directory, resolved against env.home; undefined when not configured. */
function geoipDir(setting: Setting): string | undefined {
  const p = setting.env.geoip?.path;
  if (p === null || p === undefined) return undefined;
  return path.resolve(setting.env.home, p);
}

export async function geoipList(setting: Setting): Promise<GeoIpList> {
  const dir = geoipDir(setting);
  if (dir === undefined) throw new ApiError(HTTP.notFound, 'local GeoIP not configured (env.geoip.path)');
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ApiError(HTTP.notFound, `local GeoIP directory ${dir} cannot be read (${code ?? 'error'})`);
  }
  const files: GeoIpList['files'] = [];
  for (const file of names.filter((n) => n.toLowerCase().endsWith('.mmdb')).sort()) {
    try {
      const st = await fs.stat(path.join(dir, file));
      if (st.isFile()) files.push({ file, size: st.size });
    } catch { /* removed while listing */ }
  }
  return { path: dir, files };
}
