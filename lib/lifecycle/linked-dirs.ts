// Where linked files (certificates, basehost files) may live. An upload installs them at the path
// its setting names, as the service's user (root under some supervisors), so a setting that could
// name any path could write /etc/cron.d or /root/.ssh. They must resolve, symlinks followed, under
// env.home or a directory of env.linkedFileDirs of the *running* setting: a candidate cannot widen
// the rule with its own env, which waits for a restart anyway.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Env } from '../setting/types.js';
import type { LinkedRef } from './package.js';
import type { SettingIssue } from '../setting/issues.js';

/** env.home and env.linkedFileDirs (relative ones against env.home), absolute. */
export function linkedFileDirs(env: Pick<Env, 'home' | 'linkedFileDirs'>): string[] {
  return [env.home, ...env.linkedFileDirs.map((d) => path.resolve(env.home, d))];
}

/**
 * `p` with the symlinks of its existing part resolved and the part that does not exist yet
 * appended; undefined when a component is a symlink that leads nowhere (it could be pointed
 * anywhere later).
 */
async function resolveReal(p: string): Promise<string | undefined> {
  const rest: string[] = [];
  let existing = path.resolve(p);
  for (;;) {
    try {
      return path.join(await fs.realpath(existing), ...rest);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      if (await fs.lstat(existing).then(() => true, () => false)) return undefined;
      const parent = path.dirname(existing);
      if (parent === existing) return path.join(existing, ...rest);
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

function inside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel !== '' && rel.split(path.sep)[0] !== '..' && !path.isAbsolute(rel);
}

/**
 * One message per linked file outside `dirs`, starting with the JSON path of its field;
 * empty when every file is inside.
 */
export async function outsideLinkedDirs(refs: LinkedRef[], dirs: string[]): Promise<SettingIssue[]> {
  const allowed = (await Promise.all(dirs.map(resolveReal))).filter((d): d is string => d !== undefined);
  const named = `env.home and env.linkedFileDirs (${dirs.join(', ')})`;
  const issues: SettingIssue[] = [];
  for (const r of refs) {
    const real = await resolveReal(r.target);
    if (real !== undefined && allowed.some((d) => inside(d, real))) continue;
    const why = real === undefined ? `${r.target} goes through a symlink that leads nowhere`
      : real === r.target ? `${r.target} is outside ${named}`
      : `${r.target} leads to ${real} through a symlink, outside ${named}`;
    issues.push({ path: r.jsonPath, message: why });
  }
  return issues;
}
