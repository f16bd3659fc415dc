// What changed between two settings: the hosts added, deleted and changed (for `shared`
// deployment and the watch log), and whether `env` changed (which waits for a restart).
import { resolveHost } from '../setting/resolve.js';
import { isPlainObject } from '../setting/merge.js';
import type { HostSetting, Setting } from '../setting/types.js';

/** JSON with object members sorted, so that equal values give equal text whatever their order. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (isPlainObject(v)) {
    return `{${Object.keys(v).filter((k) => v[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function sameValue(a: unknown, b: unknown): boolean {
  return stableJson(a) === stableJson(b);
}

export interface HostChanges {
  added: HostSetting[];
  deleted: string[];
  /** Changed hosts with the watch-log body of each. */
  changed: Array<{ name: string; body: Record<string, unknown> }>;
  /**
   * Hosts a `shared` deployment re-applies: added, deleted, and those whose effective setting
   * differs, which includes every host when the global `functions` changed.
   */
  affected: string[];
}

/**
 * The changed members of `next` against `prev`: new values, and beside each its previous value
 * under `_asis_<member>` (document 3, event 00020003). Arrays and scalars compare whole.
 */
function changeBody(prev: unknown, next: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const a = isPlainObject(prev) ? prev : {};
  const b = isPlainObject(next) ? next : {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (sameValue(a[k], b[k])) continue;
    if (isPlainObject(a[k]) && isPlainObject(b[k])) {
      out[k] = changeBody(a[k], b[k]);
    } else {
      out[k] = b[k] ?? null;
      out[`_asis_${k}`] = a[k] ?? null;
    }
  }
  return out;
}

export function hostChanges(prev: Setting, next: Setting): HostChanges {
  const before = new Map(prev.hosting.map((h) => [h.name, h]));
  const after = new Map(next.hosting.map((h) => [h.name, h]));
  const out: HostChanges = { added: [], deleted: [], changed: [], affected: [] };
  for (const [name, h] of after) {
    const old = before.get(name);
    if (old === undefined) {
      out.added.push(h);
      out.affected.push(name);
      continue;
    }
    if (!sameValue(old, h)) out.changed.push({ name, body: { name, ...changeBody(old, h) } });
    if (!sameValue(effective(prev, old), effective(next, h))) out.affected.push(name);
  }
  for (const name of before.keys()) {
    if (!after.has(name)) {
      out.deleted.push(name);
      out.affected.push(name);
    }
  }
  return out;
}

function effective(s: Setting, h: HostSetting): unknown {
  try {
    return resolveHost(s, h);
  } catch {
    return h;
  }
}

/** The setting without hosting[] (the body of the start event 00010001). */
export function withoutHosting(s: Setting): Omit<Setting, 'hosting'> {
  const { hosting: _h, ...rest } = s;
  return rest;
}

/**
 * The JSON paths under `prefix` whose value differs between `prev` and `next` (objects are
 * entered, arrays and scalars compare whole), sorted: what an `env` change waits for.
 */
export function changedPaths(prev: unknown, next: unknown, prefix: string): string[] {
  if (sameValue(prev, next)) return [];
  if (!isPlainObject(prev) || !isPlainObject(next)) return [prefix];
  const out: string[] = [];
  for (const k of [...new Set([...Object.keys(prev), ...Object.keys(next)])].sort()) {
    out.push(...changedPaths(prev[k], next[k], `${prefix}.${k}`));
  }
  return out;
}

/**
 * `running` with the members of `next` that a reload applies although they are under `env`:
 * the management API's access rules (allowList, roles, defaultRole). They gate the API alone,
 * and granting `enableRestart` must not itself wait for a restart (a stop and a start).
 */
export function withLiveEnv(running: Setting['env'], next: Setting['env']): Setting['env'] {
  const { allowList, roles, defaultRole } = next.management.api;
  const api = { ...running.management.api, roles, defaultRole, ...(allowList === undefined ? {} : { allowList }) };
  if (allowList === undefined) delete api.allowList;
  return { ...running, management: { ...running.management, api } };
}
