// The request rules of one virtual host, compiled once per setting load. A host without rules
// gets undefined, so the pipeline's rule stages cost one property test per request.
import type { ResolvedHost } from '../setting/types.js';
import { compileAccess, type CompiledAccess } from './access-control.js';
import type { CountryLookup } from './conditions.js';
import { compileRewrite, type CompiledRewrite } from './rewrites.js';

export interface HostRules {
  rewrites: readonly CompiledRewrite[] | undefined;
  access: CompiledAccess | undefined;
}

/** Throws a PatternError when a pattern does not compile (validation refuses such a setting first). */
export function compileHostRules(host: ResolvedHost, geo: CountryLookup | undefined): HostRules | undefined {
  const rewrites = host.urlRewrites.length === 0 ? undefined : host.urlRewrites.map((r) => compileRewrite(r, geo));
  const access = compileAccess(host.functions.network.http.frontEnd.accessControl, geo);
  if (rewrites === undefined && access === undefined) return undefined;
  return { rewrites, access };
}
