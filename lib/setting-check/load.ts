// Loading setting.json: JSON syntax, schema with defaults, hosts expanded from their basehost,
// cross-member rules. A bad file gives one SettingError listing every problem with its JSON path,
// and nothing of it is applied. Loading and its checks (semantic.ts and the *-check.ts beside it)
// live above lib/setting: they run the compilers of the setting's parts (rules, network,
// pagedesk, hook, TLS options, log schedules), which read lib/setting's types themselves.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Value } from 'typebox/value';
import { expandHosts } from '../setting/hosts.js';
import { collect, SettingError, type SettingIssue } from '../setting/issues.js';
import { isPlainObject } from '../setting/merge.js';
import { INITIAL_ROLES } from '../setting/schema/management.js';
import { TopSchema, validators } from '../setting/schema/index.js';
import { checkSemantics } from './semantic.js';
import { resolvePath } from '../setting/resolve.js';
import { loadLuaHash } from '../balance/lua-hash.js';
import type { Setting } from '../setting/types.js';

/**
 * Validates a parsed setting.json and applies every default. Relative paths (a relative env.home,
 * basehost files) resolve against `baseDir`, the directory of the setting file (default: the
 * working directory). Throws SettingError.
 */
export interface ParseOptions {
  baseDir?: string;
}

export function parseSetting(input: unknown, opts: ParseOptions = {}): Setting {
  const baseDir = path.resolve(opts.baseDir ?? process.cwd());
  if (!isPlainObject(input)) throw new SettingError([{ path: '', message: 'setting must be a JSON object' }]);
  const top: Record<string, unknown> = structuredClone(input);
  const hosting = top.hosting;
  delete top.hosting;
  const rolesWritten = isPlainObject(top.env) && isPlainObject(top.env.management) && isPlainObject(top.env.management.api)
    && top.env.management.api.roles !== undefined;

  const issues: SettingIssue[] = [];
  Value.Default(TopSchema, top);
  issues.push(...collect(validators.top, top, ''));
  const hosts = expandHosts(hosting, baseDir, issues);
  const setting = { meta: top.meta, env: top.env, functions: top.functions, hosting: hosts.hosts } as Setting;

  const api = setting.env?.management?.api;
  if (rolesWritten && Array.isArray(api?.roles)) {
    // The initial roles stay available unless the file redefines one by name.
    const named = new Set(api.roles.map((r) => r?.name));
    for (const r of INITIAL_ROLES) if (!named.has(r.name)) api.roles.push(structuredClone(r));
  }
  // Resolved before the semantic rules, which open files under it (GeoIP databases).
  if (typeof setting.env?.home === 'string') setting.env.home = path.resolve(baseDir, setting.env.home);
  checkSemantics(setting, hosts, issues);
  if (issues.length > 0) throw new SettingError(issues);
  checkLuaHash(setting);
  return setting;
}

/** A hash script that does not load is refused with the setting, not found out by a worker. */
function checkLuaHash(setting: Setting): void {
  const luaPath = setting.env.management.cluster.balance.luaPath;
  if (luaPath === null || luaPath === undefined || luaPath === '') return;
  try {
    loadLuaHash(resolvePath(setting, luaPath));
  } catch (err) {
    throw new SettingError([{ path: 'env.management.cluster.balance.luaPath', message: (err as Error).message }]);
  }
}

/** Line and column (1-based) of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

export async function loadSettingFile(file: string, opts: Omit<ParseOptions, 'baseDir'> = {}): Promise<{ setting: Setting; raw: string; baseDir: string }> {
  const abs = path.resolve(file);
  const baseDir = path.dirname(abs);
  let raw: string;
  try {
    raw = await fs.readFile(abs, 'utf8');
  } catch (err) {
    throw new SettingError([{ path: '', message: `cannot read ${abs}: ${(err as Error).message}` }]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw);
  } catch (err) {
    const message = (err as Error).message;
    const pos = /position (\d+)/.exec(message);
    const offset = pos === null ? raw.length : Number(pos[1]);
    const { line, column } = lineColumn(raw, offset);
    throw new SettingError([{ path: '', message: `${abs}: invalid JSON at line ${line}, column ${column}: ${message}` }]);
  }
  return { setting: parseSetting(parsed, { ...opts, baseDir }), raw, baseDir };
}
