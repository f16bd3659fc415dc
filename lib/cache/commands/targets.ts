// The `url` parameter of the invalidation commands (document 1): one or more targets joined by
// `|`; each a full URL with scheme, `host/path`, a directory ending in `/` (that one URL), or a
// pattern with `*` (`host/dir/*` is the whole subtree). A target without a host inherits the
// preceding target's host; with no host at all, the most recently used host applies.
import { codedError, isCoded, type CodedError } from '../../errors/codes.js';

export interface Target {
  vhost: string;
  /** What the index is scanned by: the exact URL, or the part before the first `*`. */
  prefix: string;
  /** Exact URL (all its variants) when false; `prefix` plus `match` when true. */
  wildcard: boolean;
  /** For a wildcard other than a plain trailing `*`, the full pattern a URL must match. */
  match?: RegExp;
  /** The target as given, for messages and the asynchronous queue listing. */
  text: string;
  /** Made from another target (a source's pagedesk edits): a node that receives that one makes it again. */
  derived?: true;
  /**
   * Every object of `vhost` the origin tagged so (lib/cache/tags.ts), whatever its URL: then
   * `prefix` is '' and `wildcard` false, and no URL rule (cachingKey, pagedesk edits) applies.
   */
  tag?: string;
}

/** The targets of tags: each tag on each of `vhosts` (one host when the call names it, else all). */
export function tagTargets(tags: readonly string[], vhosts: readonly string[]): Target[] {
  const out: Target[] = [];
  for (const tag of tags) for (const vhost of vhosts) out.push({ vhost, prefix: '', wildcard: false, tag, text: `tag:${tag}` });
  return out;
}

/**
 * A target that cannot be read (BAD_TARGET) or that names a host not served here
 * (TARGET_UNKNOWN_HOST): the two codes of lib/errors/codes.ts a target parse throws.
 */
export function isBadTarget(err: unknown): err is CodedError<'BAD_TARGET' | 'TARGET_UNKNOWN_HOST'> {
  return isCoded(err, 'BAD_TARGET', 'TARGET_UNKNOWN_HOST');
}

function globToRegExp(pattern: string): RegExp {
  let re = '^';
  for (const ch of pattern) re += ch === '*' ? '.*' : ch.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`${re}$`);
}

function splitHost(target: string, knownHost: (name: string) => string | undefined): { host: string | undefined; path: string } {
  let rest = target;
  const scheme = /^https?:\/\//i.exec(rest);
  if (scheme) {
    rest = rest.slice(scheme[0].length);
    const slash = rest.indexOf('/');
    const authority = slash < 0 ? rest : rest.slice(0, slash);
    return { host: authority.replace(/:\d+$/, '').toLowerCase(), path: slash < 0 ? '/' : rest.slice(slash) };
  }
  if (rest.startsWith('/')) return { host: undefined, path: rest };
  const slash = rest.indexOf('/');
  const first = slash < 0 ? rest : rest.slice(0, slash);
  const name = first.replace(/:\d+$/, '').toLowerCase();
  const asHost = { host: name, path: slash < 0 ? '/' : rest.slice(slash) };
  // `host/path`: a virtual host name or alias first (names need no dot: `bench/obj/*`), then
  // anything that looks like a host (a dot, a port, localhost, an IPv6 literal) so that an
  // unknown host is reported as such instead of being taken for a path.
  if (knownHost(name) !== undefined) return asHost;
  if (/^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?$/i.test(first) || /^[a-z0-9-]+:\d+$/i.test(first) || /^localhost$/i.test(name) || /^\[[0-9a-f:]+\](:\d+)?$/i.test(first)) {
    return asHost;
  }
  return { host: undefined, path: `/${rest}` };
}

/**
 * Parses `pieces`, the targets of a `url` split at `|`, in order; `current` is the host a piece
 * without one inherits at the start. Returns the targets and the host the last one used, so a
 * long list can be parsed a slice at a time (InvalidationService.targets).
 */
export function parsePieces(pieces: readonly string[], knownHost: (name: string) => string | undefined,
  current: string | undefined): { targets: Target[]; current: string | undefined } {
  const out: Target[] = [];
  for (const raw of pieces) {
    const text = raw.trim();
    if (text === '') continue;
    const { host, path } = splitHost(text, knownHost);
    let vhost = current;
    if (host !== undefined) {
      vhost = knownHost(host);
      if (vhost === undefined) throw codedError('TARGET_UNKNOWN_HOST', host);
    }
    if (vhost === undefined) throw codedError('BAD_TARGET', `no host for target ${text} and no host used before`);
    current = vhost;
    const star = path.indexOf('*');
    if (star < 0) { out.push({ vhost, prefix: path, wildcard: false, text }); continue; }
    const prefix = path.slice(0, star);
    const plain = star === path.length - 1;
    out.push({ vhost, prefix, wildcard: true, match: plain ? undefined : globToRegExp(path), text });
  }
  return { targets: out, current };
}

/** The `url` pieces of a call, or why there is none. */
export function urlPieces(url: string | null): string[] {
  if (url === null || url.trim() === '') throw codedError('BAD_TARGET', 'url is missing');
  return url.split('|');
}

/**
 * Parses the targets. `knownHost` maps a name (or alias) to the virtual host that serves it;
 * `lastHost` is the most recently used host for targets that name none.
 */
export function parseTargets(url: string | null, knownHost: (name: string) => string | undefined, lastHost: string | undefined): Target[] {
  const { targets } = parsePieces(urlPieces(url), knownHost, lastHost);
  if (targets.length === 0) throw codedError('BAD_TARGET', 'url names no target');
  return targets;
}
