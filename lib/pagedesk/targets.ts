// A purge of a source URL drops its edits too: the edits of `/a.html?q` are cached under
// `/a.html/<keyword>/edit...?q` (the edit URL's own key), which an exact target does not name.
// Each exact target of a host with pagedesk gets a pattern target for its edit URLs.
import type { Target } from '../cache/commands/targets.js';

const SPECIAL = /[.*+?^${}()|[\]\\]/g;

function literal(s: string): string {
  return s.replace(SPECIAL, '\\$&');
}

/** `targets` and the edit URLs of each exact one; `keywordOf`: the host's keyword when pagedesk is on. */
export function withEditTargets(targets: readonly Target[], keywordOf: (vhost: string) => string | undefined): Target[] {
  const out = [...targets];
  for (const t of targets) {
    if (t.wildcard) continue; // a pattern ending in `*` covers the edit URLs under it already
    const keyword = keywordOf(t.vhost);
    if (keyword === undefined) continue;
    const q = t.prefix.indexOf('?');
    const path = q < 0 ? t.prefix : t.prefix.slice(0, q);
    const query = q < 0 ? '' : t.prefix.slice(q);
    const prefix = `${path === '/' ? '' : path}/${keyword}/edit`;
    out.push({ vhost: t.vhost, prefix, wildcard: true, match: new RegExp(`^${literal(prefix)}[^?]*${literal(query)}$`), text: `${t.text} (pagedesk edits)`, derived: true });
  }
  return out;
}

/** Only the edit targets of exact URLs (an unsafe method on a source invalidates its edits too). */
export function editTargetsOf(vhost: string, urls: readonly string[], keyword: string): Target[] {
  return withEditTargets(urls.map((url) => ({ vhost, prefix: url, wildcard: false, text: url })), () => keyword).slice(urls.length);
}
