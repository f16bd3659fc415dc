// The text side of an edit: the replace lists, the `html.in.at` / `html.out.at` location of HTML
// inside a JSON source, and the HTML escaping of `html.in.escaped` / `html.out.escaped`.

interface Replacement { src: string; dest: string; flags: string }

/** replace.pre / replace.post: each `src` (a regular expression with `flags`) becomes `dest`. */
export function applyReplacements(text: string, list: readonly Replacement[]): string {
  let out = text;
  for (const r of list) out = out.replace(new RegExp(r.src, r.flags), r.dest);
  return out;
}

type Segment = string | number;

class AtError extends Error {
  override name = 'AtError';
}

/**
 * A location in a JSON document: `$.data.items[0].html` (the `$.` is optional), member names
 * joined by dots, array indexes in brackets.
 */
export function parseAt(at: string): Segment[] {
  const s = at.startsWith('$') ? at.slice(1) : `.${at}`;
  const out: Segment[] = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]/gy;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = re.exec(s)) !== null) {
    out.push(m[1] !== undefined ? m[1] : Number(m[2]));
    end = re.lastIndex;
  }
  if (end !== s.length || out.length === 0) throw new AtError(`"${at}" is not a JSON location like $.data.html or items[0].body`);
  return out;
}

/** The string at `path` in `doc`; undefined when there is none. */
export function getAt(doc: unknown, path: readonly Segment[]): string | undefined {
  let cur: unknown = doc;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return typeof cur === 'string' ? cur : undefined;
}

/** Sets `value` at `path` (the containers up to it must exist); false when they do not. */
export function setAt(doc: unknown, path: readonly Segment[], value: string): boolean {
  let cur: unknown = doc;
  for (let i = 0; i < path.length - 1; i++) {
    if (cur === null || typeof cur !== 'object') return false;
    cur = (cur as Record<string | number, unknown>)[path[i]!];
  }
  if (cur === null || typeof cur !== 'object') return false;
  (cur as Record<string | number, unknown>)[path[path.length - 1]!] = value;
  return true;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** The five escapes above, numeric references and &nbsp;; anything else is left as written. */
export function unescapeHtml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (all, ref: string) => {
    if (ref.startsWith('#x') || ref.startsWith('#X')) return codePoint(parseInt(ref.slice(2), 16), all);
    if (ref.startsWith('#')) return codePoint(parseInt(ref.slice(1), 10), all);
    return NAMED[ref] ?? all;
  });
}

function codePoint(n: number, all: string): string {
  return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : all;
}
