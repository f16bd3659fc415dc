// Cache tags (surrogate keys): an origin names groups of responses in a response field
// (`Surrogate-Key` as Fastly reads it, `Cache-Tag` as Cloudflare and Akamai do; which fields is
// functions.network.cache.tags.fields), the index keeps each stored variant's tags, and an
// operator purges a tag instead of listing URLs. What a tag may be is decided here once, for
// both ends: what an origin sends (too many or too long tags are dropped, never an error the
// client sees) and what an operator asks for (refused with the reason, nothing runs).

/** Bytes of one tag at most (Fastly's and Cloudflare's bound on a key). */
export const MAX_TAG_BYTES = 1024;
/** Tags one stored response keeps at most; an origin's further tags are ignored. */
export const MAX_TAGS_PER_OBJECT = 128;
/** Tags one invalidation call may name. */
export const MAX_TAGS_PER_CALL = 100;

/** Tags are separated by spaces or commas (both spellings are in use) and hold visible ASCII. */
const SEPARATORS = /[\s,]+/;
const VISIBLE = /^[\x21-\x7e]+$/;

function usable(tag: string): boolean {
  return tag.length <= MAX_TAG_BYTES && VISIBLE.test(tag);
}

/**
 * The tags of a response: the values of `fields` (lower-case names), split at spaces and commas,
 * each once, in order; at most MAX_TAGS_PER_OBJECT, too long or non-ASCII ones left out.
 */
export function responseTags(headers: Record<string, string | string[] | undefined>, fields: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const f of fields) {
    const v = headers[f];
    if (v === undefined) continue;
    for (const value of Array.isArray(v) ? v : [v]) {
      for (const tag of value.split(SEPARATORS)) {
        if (tag === '' || seen.has(tag) || !usable(tag)) continue;
        if (out.length === MAX_TAGS_PER_OBJECT) return out;
        seen.add(tag);
        out.push(tag);
      }
    }
  }
  return out;
}

/**
 * The tags an operator names (the `tag` parameters of a call, or the values of a PURGE
 * request's tag fields, each split as an origin's); undefined when it is acceptable, else why not.
 */
export function tagProblem(tags: readonly string[]): string | undefined {
  if (tags.length === 0) return 'tag is empty';
  if (tags.length > MAX_TAGS_PER_CALL) return `${tags.length} tags, more than ${MAX_TAGS_PER_CALL} in one call`;
  for (const t of tags) {
    if (t === '') return 'tag is empty';
    if (Buffer.byteLength(t) > MAX_TAG_BYTES) return `tag longer than ${MAX_TAG_BYTES} bytes: ${t.slice(0, 40)}...`;
    if (!VISIBLE.test(t)) return `tag ${JSON.stringify(t.slice(0, 40))} holds characters other than visible ASCII (spaces and commas separate tags)`;
  }
  return undefined;
}

/** Splits one field value or parameter into tags as responseTags does (without dropping any). */
export function splitTags(value: string): string[] {
  return value.split(SEPARATORS).filter((t) => t !== '');
}

/** A host's tag fields (functions.network.cache.tags), names in lower case. */
export interface TagFields { fields: readonly string[]; strip: boolean }

export function tagFieldsOf(c: { enable: boolean; fields: readonly string[]; strip: boolean }): TagFields | undefined {
  return c.enable ? { fields: c.fields.map((f) => f.toLowerCase()), strip: c.strip } : undefined;
}

/**
 * The tags of an origin answer as it arrives, before the cache or the client sees it; the fields
 * are removed from `headers` when the host strips them (then only the index keeps the tags).
 */
export function takeTags(headers: Record<string, string | string[] | undefined>, conf: TagFields | undefined): string[] | undefined {
  if (conf === undefined) return undefined;
  // Most answers carry no tag field: nothing to split, nothing to strip.
  const fields = conf.fields;
  let present = false;
  for (let i = 0; i < fields.length && !present; i++) present = headers[fields[i]!] !== undefined;
  if (!present) return undefined;
  const tags = responseTags(headers, fields);
  if (conf.strip) for (const f of fields) delete headers[f];
  return tags.length === 0 ? undefined : tags;
}
