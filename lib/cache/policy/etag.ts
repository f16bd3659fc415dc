// Entity-tag parsing and comparison (RFC 9110 8.8.3).

export interface EntityTag {
  weak: boolean;
  /** The opaque-tag including its quotes. */
  tag: string;
}

/** Parses one entity-tag; undefined when malformed. */
export function parseEntityTag(value: string): EntityTag | undefined {
  const s = value.trim();
  const weak = s.length > 2 && (s.charCodeAt(0) === 87 /* W */) && s.charCodeAt(1) === 47 /* / */;
  const tag = weak ? s.slice(2) : s;
  if (tag.length < 2 || tag.charCodeAt(0) !== 34 || tag.charCodeAt(tag.length - 1) !== 34) return undefined;
  if (tag.indexOf('"', 1) !== tag.length - 1) return undefined;
  return { weak, tag };
}

/**
 * Parses an If-Match / If-None-Match list. Returns '*' for the wildcard; malformed members are
 * skipped. Commas are legal inside an opaque-tag, so the list is scanned quote-aware.
 */
export function parseEntityTagList(value: string | string[]): EntityTag[] | '*' {
  const s = typeof value === 'string' ? value : value.join(', ');
  if (s.trim() === '*') return '*';
  const out: EntityTag[] = [];
  let i = 0;
  const len = s.length;
  while (i < len) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 44) { i++; continue; }
    let weak = false;
    if (c === 87 && s.charCodeAt(i + 1) === 47) { weak = true; i += 2; }
    if (s.charCodeAt(i) !== 34) { while (i < len && s.charCodeAt(i) !== 44) i++; continue; }
    const end = s.indexOf('"', i + 1);
    if (end < 0) break;
    out.push({ weak, tag: s.slice(i, end + 1) });
    i = end + 1;
  }
  return out;
}

/** Strong comparison: both strong and identical opaque-tags. */
export function strongMatch(a: EntityTag, b: EntityTag): boolean {
  return !a.weak && !b.weak && a.tag === b.tag;
}

/** Weak comparison: identical opaque-tags, weakness ignored. */
export function weakMatch(a: EntityTag, b: EntityTag): boolean {
  return a.tag === b.tag;
}
