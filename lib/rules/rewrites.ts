// `hosting[].urlRewrites[]` compiled once per setting load: each entry's pattern into a matcher
// and its replace into a template. Applying them is the pipeline's rewrite stage.
import { compilePattern, compileReplace, type CompiledPattern, type CountryLookup } from './conditions.js';

export interface UrlRewriteSetting {
  pattern: string;
  replace: string;
  accessLogUrl?: 'replace' | 'pattern' | undefined;
  caseSensitive: boolean;
}

export interface CompiledRewrite {
  readonly pattern: CompiledPattern;
  /** The new URL from the URL captures; the replace string as written without a URL condition. */
  readonly replace: (captures: readonly string[]) => string;
  /** The access log shows the rewritten URL (accessLogUrl `replace`), else the client's. */
  readonly logRewritten: boolean;
  /** The entry as written, for the setting trace. */
  readonly entry: UrlRewriteSetting;
}

/** Throws PatternError (the caller knows the entry's JSON path). */
export function compileRewrite(r: UrlRewriteSetting, geo: CountryLookup | undefined): CompiledRewrite {
  const pattern = compilePattern(r.pattern, { caseSensitive: r.caseSensitive, allowUrl: true, geo });
  const template = compileReplace(r.replace);
  const literal = r.replace;
  return {
    pattern,
    replace: pattern.hasUrl ? template : () => literal,
    logRewritten: r.accessLogUrl === 'replace',
    entry: r,
  };
}

/**
 * A rewritten URL split into the host it routes to and the path: `/path` stays on the host,
 * `host/path` (or `http(s)://host/path`) goes to that host. The host is lower-cased, without port.
 */
export function splitRewritten(out: string, currentHost: string): { host: string; url: string } {
  if (out.charCodeAt(0) === 47 /* / */) return { host: currentHost, url: out };
  const scheme = /^https?:\/\//i.exec(out);
  const rest = scheme === null ? out : out.slice(scheme[0].length);
  let slash = rest.search(/[/?]/);
  if (slash < 0) slash = rest.length;
  let host = rest.slice(0, slash).toLowerCase();
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !host.endsWith(']')) host = host.slice(0, colon);
  const path = rest.slice(slash);
  return { host, url: path === '' ? '/' : path.charCodeAt(0) === 63 /* ? */ ? `/${path}` : path };
}
