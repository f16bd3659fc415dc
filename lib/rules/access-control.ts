// `functions.network.http.frontEnd.accessControl` compiled once per setting load: the first
// matching entry of matchingList decides (allow, deny or redirect); none matching: `default`.
import { compilePattern, compileReplace, type CompiledPattern, type CountryLookup } from './conditions.js';

interface AccessEntrySetting {
  pattern: string;
  action: 'allow' | 'deny' | 'redirect';
  location?: string | undefined;
  /** Absent in entries of a host's own functions (array items get no schema defaults there). */
  status?: number | undefined;
}

export interface AccessControlSetting {
  enable: boolean;
  default: 'allow' | 'deny';
  caseSensitive: boolean;
  matchingList: AccessEntrySetting[];
}

interface CompiledAccessEntry {
  readonly pattern: CompiledPattern;
  readonly action: 'allow' | 'deny' | 'redirect';
  readonly location: (captures: readonly string[]) => string;
  readonly status: number;
  readonly entry: AccessEntrySetting;
}

export interface CompiledAccess {
  readonly entries: readonly CompiledAccessEntry[];
  readonly denyByDefault: boolean;
}

/** undefined when the module is off (the stage then costs nothing). Throws PatternError. */
export function compileAccess(s: AccessControlSetting, geo: CountryLookup | undefined): CompiledAccess | undefined {
  if (!s.enable) return undefined;
  const entries = s.matchingList.map((e) => {
    const pattern = compilePattern(e.pattern, { caseSensitive: s.caseSensitive, allowUrl: true, geo });
    const location = compileReplace(e.location ?? '');
    return { pattern, action: e.action, location, status: e.status ?? 302, entry: e };
  });
  return { entries, denyByDefault: s.default === 'deny' };
}
