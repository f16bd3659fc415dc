// hosting[] at load time: each entry is validated as written, expanded from its basehost (a
// host of hosting[] or a host file), then given the host defaults. Defaults come last so that a
// member the referring host does not write is taken from its base, not from the defaults.
import fs from 'node:fs';
import path from 'node:path';
import { Value } from 'typebox/value';
import { collect, formatIssue, joinPath, jsonType, type SettingIssue } from './issues.js';
import { deepMerge, isPlainObject } from './merge.js';
import { HostSchema, validators } from './schema/index.js';
import type { HostSetting } from './types.js';

type Raw = Record<string, unknown>;

interface Entry { index: number; raw: Raw; valid: boolean }

export interface ExpandedHosts {
  /** The hosts that are valid, expanded and defaulted. */
  hosts: HostSetting[];
  /** Index in the file's hosting[] of each of `hosts` (invalid entries are left out). */
  indices: number[];
  /** Every host name the file gives, valid entries or not. */
  names: Set<string>;
}

class Expander {
  private readonly byName = new Map<string, Entry>();
  private readonly files = new Map<string, Raw | string>();

  constructor(private readonly settingDir: string, private readonly issues: SettingIssue[]) {}

  run(hosting: unknown): ExpandedHosts {
    const out: ExpandedHosts = { hosts: [], indices: [], names: new Set() };
    if (hosting === undefined) return out;
    if (!Array.isArray(hosting)) {
      this.issues.push({ path: 'hosting', message: `must be array, got ${jsonType(hosting)}` });
      return out;
    }
    const entries = hosting.map((raw: unknown, index): Entry => {
      const found = collect(validators.hostInput, raw, joinPath('hosting', index));
      this.issues.push(...found);
      return { index, raw: raw as Raw, valid: found.length === 0 };
    });
    for (const e of entries) {
      const name = isPlainObject(e.raw) ? e.raw.name : undefined;
      if (typeof name !== 'string') continue;
      const first = this.byName.get(name);
      if (first === undefined) {
        this.byName.set(name, e);
      } else {
        this.issues.push({ path: `hosting[${e.index}].name`, message: `duplicate host name "${name}" (also hosting[${first.index}])` });
      }
    }
    out.names = new Set(this.byName.keys());
    for (const e of entries) {
      if (!e.valid) continue;
      const where = `hosting[${e.index}].mode.basehost`;
      const merged = this.expand(e.raw, this.settingDir, [`host:${e.raw.name as string}`], where);
      if (merged === undefined) continue;
      Value.Default(HostSchema, merged);
      const found = collect(validators.host, merged, `hosting[${e.index}]`);
      this.issues.push(...found);
      if (found.length > 0) continue;
      out.hosts.push(merged as HostSetting);
      out.indices.push(e.index);
    }
    return out;
  }

  /** `host` with its basehost chain applied, or undefined after reporting why not. */
  private expand(host: Raw, dir: string, chain: string[], where: string): Raw | undefined {
    const mode = host.mode as Raw | undefined;
    const ref = mode?.basehost as string | undefined;
    if (ref === undefined) return structuredClone(host);
    let base: Raw;
    let baseDir = this.settingDir;
    let key: string;
    const named = this.byName.get(ref);
    if (named !== undefined) {
      // An invalid base host is reported at its own path already.
      if (!named.valid) return undefined;
      key = `host:${ref}`;
      base = named.raw;
    } else {
      const file = path.resolve(dir, ref);
      const loaded = this.readHostFile(file);
      if (typeof loaded === 'string') {
        this.issues.push({ path: where, message: `"${ref}" is neither a host of hosting[] nor a valid host file: ${loaded}` });
        return undefined;
      }
      key = `file:${file}`;
      base = loaded;
      baseDir = path.dirname(file);
    }
    if (chain.includes(key)) {
      const names = [...chain, key].map((k) => k.replace(/^(host|file):/, ''));
      this.issues.push({ path: where, message: `basehost cycle: ${names.join(' -> ')}` });
      return undefined;
    }
    const expandedBase = this.expand(base, baseDir, [...chain, key], where);
    if (expandedBase === undefined) return undefined;
    const { name: _name, mode: _mode, ...copied } = expandedBase;
    return deepMerge(copied, host) as Raw;
  }

  /** The host object of a host file, or the reason it cannot be used. */
  private readHostFile(file: string): Raw | string {
    const cached = this.files.get(file);
    if (cached !== undefined) return cached;
    let result: Raw | string;
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
      const found = collect(validators.hostFile, parsed, '');
      result = found.length === 0 ? (parsed as Raw) : found.map(formatIssue).join('; ');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      result = e.code === 'ENOENT' ? `no file ${file}` : e.code !== undefined ? `cannot read ${file} (${e.code})` : `${file}: ${e.message}`;
    }
    this.files.set(file, result);
    return result;
  }
}

/** The hosting[] of `Setting` from the hosting[] of the file; problems go to `issues`. */
export function expandHosts(hosting: unknown, settingDir: string, issues: SettingIssue[]): ExpandedHosts {
  return new Expander(settingDir, issues).run(hosting);
}
