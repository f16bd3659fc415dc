// Access control of the management API: the caller's address picks the first matching
// allowList entry, the entry names a role (or defaultRole), and the path prefix names the
// permission the role must have. The allowList is compiled once per applied setting.
import type { ManagementApi, Permissions } from '../setting/types.js';
import { compileAddress, inRange, parseIp, type AddressRange } from './ip.js';

export type Permission = keyof Permissions;

/**
 * Path prefixes and the permission each needs, matched on whole segments. A route whose path no
 * entry covers could be reached by any listed address, so the route table is checked against
 * this list when it is built (see routes/index.ts).
 */
const GATES: ReadonlyArray<readonly [prefix: string, permission: Permission]> = [
  ['/setting', 'enableSetting'],
  ['/command/purge', 'enablePurge'],
  ['/command/expire', 'enablePurge'],
  ['/command/expireafter', 'enablePurge'],
  ['/command/hardpurge', 'enablePurge'],
  ['/command/async', 'enablePurge'],
  ['/command/resetorigin', 'enablePurge'],
  ['/command/install', 'enableInstall'],
  // It makes values for setting.json: those who may change the setting.
  ['/command/encryptpassword', 'enableSetting'],
  ['/command/service/restart', 'enableRestart'],
  ['/command/service/stop', 'enableRestart'],
  ['/command/restart', 'enableRestart'],
  ['/command/stop', 'enableRestart'],
  ['/command/cluster', 'enableCluster'],
  ['/cluster', 'enableCluster'],
  ['/metrics', 'enableMetric'],
  ['/graph', 'enableGraph'],
  ['/monitoring', 'enableMonitoring'],
  ['/get', 'enableGet'],
];

function underPrefix(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  const next = path.charCodeAt(prefix.length);
  // Whole segments, but `/get/setting.env` and `/get/hosting[name]` belong to /get.
  return Number.isNaN(next) || next === 0x2f /* / */ || next === 0x2e /* . */ || next === 0x5b /* [ */;
}

/** The permission a path needs, or undefined when no gate covers it. */
export function permissionFor(path: string): Permission | undefined {
  let best: readonly [string, Permission] | undefined;
  for (const g of GATES) if (underPrefix(path, g[0]) && (best === undefined || g[0].length > best[0].length)) best = g;
  return best?.[1];
}

export type AccessDecision =
  | { allowed: true; role: string; permission: Permission | undefined }
  | { allowed: false; reason: 'address not allowed' | 'no role' | 'no permission'; role?: string };

export class AccessControl {
  private readonly entries: Array<{ range: AddressRange; role: string }>;
  private readonly roles: Map<string, Permissions>;

  /** Throws on an address that is not one of the allowList forms. */
  constructor(api: Pick<ManagementApi, 'allowList' | 'roles' | 'defaultRole'>) {
    this.entries = (api.allowList ?? []).map((e) => ({ range: compileAddress(e.addr), role: e.role ?? api.defaultRole }));
    // A later role of the same name does not override the first, as the first allowList entry wins.
    this.roles = new Map();
    for (const r of api.roles) if (!this.roles.has(r.name)) this.roles.set(r.name, r.permissions);
  }

  /** The role bound to an address: the first matching entry's. */
  roleOf(remoteAddress: string): string | undefined {
    const ip = parseIp(remoteAddress);
    if (ip === undefined) return undefined;
    for (const e of this.entries) if (inRange(ip, e.range)) return e.role;
    return undefined;
  }

  check(remoteAddress: string, path: string): AccessDecision {
    const role = this.roleOf(remoteAddress);
    if (role === undefined) return { allowed: false, reason: 'address not allowed' };
    const perms = this.roles.get(role);
    if (perms === undefined) return { allowed: false, reason: 'no role', role };
    const permission = permissionFor(path);
    if (permission !== undefined && perms[permission] !== true) return { allowed: false, reason: 'no permission', role };
    return { allowed: true, role, permission };
  }
}
