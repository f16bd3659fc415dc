// functions.contents.pagedesk as the runtime uses it, and the load-time checks of what a schema
// cannot say (regular expressions, selectors, JSON locations, sections that need one another):
// a setting the edit could not carry out is refused at its JSON path instead of being ignored.
import { createRequire } from 'node:module';
import type { Functions } from '../setting/types.js';
import { parseAt } from './text.js';

export type PagedeskSetting = Functions['contents']['pagedesk'];

/** maxSourceSize and maxDomSourceSize are in MiB (fractions allowed); 0 is no limit. */
export const MIB = 1024 * 1024;

interface PagedeskIssue { path: string; message: string }

function regexIssue(src: string, flags: string | undefined): string | undefined {
  try {
    new RegExp(src, flags);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * cheerio (css-select, css-what ...), loaded at the first selector to check, synchronously as
 * the checks run: a setting without DOM edits, the usual one, never loads it (about 2 MB of heap
 * less in every RT worker). The edit threads import it themselves (dom.ts).
 */
let cheerio: typeof import('cheerio/slim') | undefined;

function selectorIssue(sel: string): string | undefined {
  try {
    (cheerio ??= createRequire(import.meta.url)('cheerio/slim') as typeof import('cheerio/slim')).load('', null, false)(sel);
    return undefined;
  } catch (err) {
    return `not a CSS selector: ${(err as Error).message}`;
  }
}

export function checkPagedesk(p: PagedeskSetting, base: string): PagedeskIssue[] {
  const out: PagedeskIssue[] = [];
  const at = `${base}.contents.pagedesk`;
  const scheme = p.meta.urlScheme;
  if (scheme !== null && scheme !== 'http' && scheme !== 'https') out.push({ path: `${at}.meta.urlScheme`, message: 'must be http, https or null (the client\'s scheme)' });
  if (/[/?#;\s]/.test(p.meta.keyword)) out.push({ path: `${at}.meta.keyword`, message: 'must be one URL path segment (no /, ?, #, ; or spaces)' });
  const names = new Set<string>();
  p.template.list.forEach((t, i) => {
    if (names.has(t.name)) out.push({ path: `${at}.template.list[${i}].name`, message: `duplicate template name "${t.name}"` });
    names.add(t.name);
  });
  for (const side of ['pre', 'post'] as const) {
    p.replace[side].list.forEach((r, i) => {
      const bad = regexIssue(r.src, r.flags);
      if (bad !== undefined) out.push({ path: `${at}.replace.${side}.list[${i}]`, message: `src/flags: ${bad}` });
    });
  }
  for (const side of ['in', 'out'] as const) {
    const loc = p.html[side].at;
    if (loc === null) continue;
    try { parseAt(loc); } catch (err) { out.push({ path: `${at}.html.${side}.at`, message: (err as Error).message }); }
  }
  if (p.html.out.at !== null && p.html.in.at === null) {
    out.push({ path: `${at}.html.out.at`, message: 'needs html.in.at: the edited HTML is put back into the JSON source it came from' });
  }
  checkDom(p, at, out);
  return out;
}

function checkDom(p: PagedeskSetting, at: string, out: PagedeskIssue[]): void {
  const dom = p.dom;
  for (const name of ['extract', 'insert', 'remove', 'anchor', 'refctrl'] as const) {
    if (dom[name].enable && !p.html.enable) out.push({ path: `${at}.dom.${name}.enable`, message: 'needs html.enable true (DOM processing works on recognised HTML only)' });
  }
  const sel = (path: string, s: string): void => {
    const bad = selectorIssue(s);
    if (bad !== undefined) out.push({ path, message: bad });
  };
  if (dom.extract.enable && dom.extract.selector === null) out.push({ path: `${at}.dom.extract.selector`, message: 'required when dom.extract is enabled' });
  if (dom.extract.selector !== null) sel(`${at}.dom.extract.selector`, dom.extract.selector);
  dom.insert.list.forEach((it, i) => sel(`${at}.dom.insert.list[${i}].selector`, it.selector));
  dom.remove.elements.forEach((e, i) => sel(`${at}.dom.remove.elements[${i}]`, typeof e === 'string' ? e : e.tag));
  dom.anchor.matchingList.forEach((m, i) => {
    const bad = regexIssue(m.domain, 'i');
    if (bad !== undefined) out.push({ path: `${at}.dom.anchor.matchingList[${i}].domain`, message: bad });
  });
  dom.refctrl.tags.forEach((t, i) => {
    const path = `${at}.dom.refctrl.tags[${i}]`;
    sel(`${path}.name`, t.name);
    if (t.action === 'replaceAttr' && (t.replaceAttr === undefined || t.replaceAttr === '')) out.push({ path: `${path}.replaceAttr`, message: 'required for the replaceAttr action (the new attribute name)' });
    if (t.action === 'insertAttr' && (t.insertAttr === undefined || t.insertAttr.length === 0)) out.push({ path: `${path}.insertAttr`, message: 'required for the insertAttr action (the attributes to add)' });
  });
}
