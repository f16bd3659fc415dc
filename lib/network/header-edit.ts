// Header field edits of the modify rules (functions.network.http.frontEnd.modify and
// backEnd.modify) and their modes: set, add, append, unset, rewrite. The hook protocol's
// request.headers[] modes are the same but rewrite. Compiled once per setting load; applied to a
// plain header object in place (lower-case names, a repeated field as an array).
import { compileReplace, PatternError } from '../rules/conditions.js';

export type EditMode = 'set' | 'add' | 'append' | 'unset' | 'rewrite';

export interface HeaderEdit {
  key: string;
  mode: EditMode;
  value: string;
  match: RegExp | undefined;
  /** rewrite: the replacement with the match's captures (#0..#9). */
  replace: ((captures: readonly string[]) => string) | undefined;
}

/** Fields nobody may edit: they frame the message, and a wrong value desynchronises the connection. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'host', 'upgrade', 'te', 'trailer', 'keep-alive']);

export function compileEdit(e: { key: string; mode: EditMode; value: string; match?: string | undefined }): HeaderEdit {
  const key = e.key.trim().toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key)) throw new PatternError(`"${e.key}" is not a header field name`);
  if (FRAMING.has(key)) throw new PatternError(`${key} frames the message and cannot be edited`);
  if (/[\r\n\0]/.test(e.value)) throw new PatternError(`the value of ${key} holds a line break or NUL`);
  if (e.mode === 'rewrite') {
    if (e.match === undefined) throw new PatternError('mode rewrite needs match (a regular expression)');
    let match: RegExp;
    try {
      match = new RegExp(e.match);
    } catch (err) {
      throw new PatternError(`match: invalid regular expression ${JSON.stringify(e.match)} (${(err as Error).message})`);
    }
    return { key, mode: e.mode, value: e.value, match, replace: compileReplace(e.value) };
  }
  if (e.match !== undefined) throw new PatternError(`match is for mode rewrite only, not ${e.mode}`);
  return { key, mode: e.mode, value: e.value, match: undefined, replace: undefined };
}

type Fields = Record<string, string | string[] | number | undefined>;

/** Applies the edits in order to `h` (changed in place). */
export function applyEdits(h: Fields, edits: readonly HeaderEdit[]): void {
  for (const e of edits) {
    const cur = h[e.key];
    switch (e.mode) {
      case 'set': h[e.key] = e.value; break;
      case 'unset': delete h[e.key]; break;
      case 'add':
        h[e.key] = cur === undefined ? e.value : Array.isArray(cur) ? [...cur, e.value] : [String(cur), e.value];
        break;
      case 'append':
        h[e.key] = cur === undefined ? e.value : `${Array.isArray(cur) ? cur.join(', ') : String(cur)}, ${e.value}`;
        break;
      case 'rewrite': {
        if (cur === undefined) break;
        const re = e.match!;
        const replace = e.replace!;
        // The callback gets the match and its groups, then the offset (the first number).
        const one = (v: string): string => v.replace(re, (...m: unknown[]) => {
          const groups = m.slice(0, m.findIndex((x) => typeof x === 'number'));
          return replace(groups.map((x) => (typeof x === 'string' ? x : '')));
        });
        h[e.key] = Array.isArray(cur) ? cur.map(one) : one(String(cur));
        break;
      }
    }
  }
}
