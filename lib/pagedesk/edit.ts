// One edit, as the edit thread runs it (document 3): replace.pre, the HTML taken from the source
// (whole, or at html.in.at in a JSON source), the DOM sections, the marker, the HTML put back
// (html.out.at) and replace.post. Pure: text in, text out.
import type { ExtractSpec } from './command.js';
import { editDom } from './dom.js';
import { MIB, type PagedeskSetting } from './setting.js';
import { applyReplacements, escapeHtml, getAt, parseAt, setAt, unescapeHtml } from './text.js';

export const MARKER = '<!-- // through svc pagedesk // -->';
const ESCAPED_MARKER = escapeHtml(MARKER);

export interface EditJob {
  text: string;
  setting: PagedeskSetting;
  /** An extraction: the setting's dom.extract values or the inline ones; undefined for edit/default. */
  extract: ExtractSpec | undefined;
  /** The request's host: relative references are its own. */
  host: string;
}

/**
 * `edited`: `text` is the output. `marked`: the source carries the marker, left as it is.
 * `unedited`: the edit could not be made (`reason`), the source goes out as it came.
 * `type`: `html` when the output is the HTML itself (a whole page or an extraction), `plain`
 * for an attribute extraction, `source` when it keeps the source's type (JSON with out.at).
 */
export type EditResult =
  | { outcome: 'edited'; text: string; type: 'html' | 'plain' | 'source'; note: string | undefined }
  | { outcome: 'marked' }
  | { outcome: 'unedited'; reason: string };

export function runEdit(job: EditJob): EditResult {
  const p = job.setting;
  if (job.text.includes(MARKER) || job.text.includes(ESCAPED_MARKER)) return { outcome: 'marked' };
  let text = p.replace.pre.enable ? applyReplacements(job.text, p.replace.pre.list) : job.text;
  let type: 'html' | 'plain' | 'source' = 'html';
  let note: string | undefined;
  if (p.html.enable) {
    let html = text;
    let json: unknown;
    const inAt = p.html.in.at;
    if (inAt !== null) {
      try {
        json = JSON.parse(text);
      } catch {
        return { outcome: 'unedited', reason: `html.in.at ${inAt}: the source is not JSON` };
      }
      const found = getAt(json, parseAt(inAt));
      if (found === undefined) return { outcome: 'unedited', reason: `html.in.at ${inAt}: no string there` };
      html = p.html.in.escaped ? unescapeHtml(found) : found;
    }
    const domLimit = p.meta.maxDomSourceSize * MIB;
    if (domLimit > 0 && Buffer.byteLength(html) > domLimit) {
      if (job.extract !== undefined) return { outcome: 'unedited', reason: `HTML larger than maxDomSourceSize ${p.meta.maxDomSourceSize} MiB: nothing to extract from` };
      note = `HTML larger than maxDomSourceSize ${p.meta.maxDomSourceSize} MiB: DOM sections skipped`;
    } else {
      const dom = editDom(html, p.dom, job.extract, { host: job.host });
      html = dom.html;
      if (dom.plain) type = 'plain';
    }
    const outAt = p.html.out.at;
    if (type === 'plain') {
      text = html;
    } else if (outAt !== null) {
      const marked = `${MARKER}\n${html}`;
      if (!setAt(json, parseAt(outAt), p.html.out.escaped ? escapeHtml(marked) : marked)) {
        return { outcome: 'unedited', reason: `html.out.at ${outAt}: no such place in the source` };
      }
      text = JSON.stringify(json);
      type = 'source';
    } else {
      text = `${MARKER}\n${html}`;
    }
  } else {
    text = `${MARKER}\n${text}`;
    type = 'source';
  }
  if (p.replace.post.enable) text = applyReplacements(text, p.replace.post.list);
  return { outcome: 'edited', text, type, note };
}
