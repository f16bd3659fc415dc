// The DOM sections of pagedesk (document 3): remove, refctrl, anchor, insert, then extract. Runs
// in the edit thread (workers/pagedesk-edit.ts) on cheerio in htmlparser2 mode, which keeps the
// document as written (no implied html/head/body, no reordering).
import { load, type CheerioAPI } from 'cheerio/slim';
import type { ExtractSpec } from './command.js';
import type { PagedeskSetting } from './setting.js';

type Dom = PagedeskSetting['dom'];

/** Where the page was asked for: relative references belong to this host. */
interface Page { host: string }

interface DomOutcome {
  html: string;
  /** An attribute extraction: the value is plain text, not HTML. */
  plain: boolean;
}

// cheerio/slim parses with htmlparser2 only; xmlMode false is its HTML mode.
const HTML_MODE = { xml: { xmlMode: false } } as const;

export function editDom(html: string, dom: Dom, extract: ExtractSpec | undefined, page: Page): DomOutcome {
  const $ = load(html, HTML_MODE, false);
  if (dom.remove.enable) removeElements($, dom.remove);
  if (dom.refctrl.enable) controlReferences($, dom.refctrl, page);
  if (dom.anchor.enable) controlAnchors($, dom.anchor, page);
  if (dom.insert.enable) insertHtml($, dom.insert);
  if (extract !== undefined) return extractFrom($, extract);
  return { html: $.html(), plain: false };
}

function removeElements($: CheerioAPI, r: Dom['remove']): void {
  for (const e of r.elements) {
    const tag = typeof e === 'string' ? e : e.tag;
    const withChildren = typeof e === 'string' ? r.includeChild : e.includeChild ?? r.includeChild;
    $(tag).each((_, el) => {
      if (withChildren) $(el).remove();
      else $(el).replaceWith($(el).contents());
    });
  }
}

/**
 * The host a reference points to: the page's host for a relative one, undefined for what names
 * no host (mailto:, javascript:, data:, a fragment).
 */
function hostOf(ref: string, page: Page): string | undefined {
  const v = ref.trim();
  if (v === '' || v.startsWith('#')) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(v)) {
    if (!/^https?:/i.test(v)) return undefined;
  } else if (!v.startsWith('//')) {
    return page.host;
  }
  try {
    return new URL(v.startsWith('//') ? `http:${v}` : v).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** `example.com` names that host only; `*.example.com` and `.example.com` its subdomains too. */
function domainListed(host: string, domains: readonly string[]): boolean {
  for (const raw of domains) {
    const d = raw.toLowerCase();
    if (d === host) return true;
    const suffix = d.startsWith('*.') ? d.slice(1) : d.startsWith('.') ? d : undefined;
    if (suffix !== undefined && (host.endsWith(suffix) || host === suffix.slice(1))) return true;
  }
  return false;
}

/** The attribute that holds a tag's reference when `attr` is not given. */
function referenceAttr(tag: string): string {
  return ['a', 'area', 'link', 'base'].includes(tag.toLowerCase()) ? 'href' : 'src';
}

function controlReferences($: CheerioAPI, r: Dom['refctrl'], page: Page): void {
  for (const t of r.tags) {
    const attr = t.attr ?? referenceAttr(t.name);
    const domains = t.domains ?? r.domains;
    $(t.name).each((_, el) => {
      const node = $(el);
      const value = node.attr(attr);
      if (value === undefined) return;
      const host = hostOf(value, page);
      // A relative reference, or one to the page's own host, is the page's own content.
      if (host === undefined || host === page.host) return;
      const listed = domainListed(host, domains);
      if (r.mode === 'whitelist' ? listed : !listed) return;
      switch (t.action) {
        case 'removeTag': node.remove(); return;
        case 'removeAttr': node.removeAttr(attr); return;
        case 'replaceAttr': node.removeAttr(attr).attr(t.replaceAttr!, value); return;
        case 'insertAttr': for (const a of t.insertAttr ?? []) node.attr(a.name, a.value);
      }
    });
  }
}

function controlAnchors($: CheerioAPI, a: Dom['anchor'], page: Page): void {
  const matching = a.matchingList.map((m) => ({ re: new RegExp(m.domain, 'i'), m }));
  $('a[href]').each((_, el) => {
    const host = hostOf(el.attribs.href!, page);
    if (host === undefined) return;
    let enableLink = a.enableLink;
    let target = a.target;
    if (matching.length > 0) {
      const hit = matching.find((x) => x.re.test(host));
      if (hit === undefined) return;
      enableLink = hit.m.enableLink ?? enableLink;
      target = hit.m.target ?? target;
    }
    if (!enableLink) $(el).removeAttr('href');
    const has = el.attribs.target !== undefined;
    if (target.framename === null) {
      if (target.overwrite) $(el).removeAttr('target');
    } else if (target.overwrite || !has) {
      $(el).attr('target', target.framename);
    }
  });
}

function insertHtml($: CheerioAPI, ins: Dom['insert']): void {
  for (const item of ins.list) {
    const action = item.action ?? ins.action;
    $(item.selector).each((_, el) => {
      const node = $(el);
      switch (action) {
        case 'appendChild': node.append(item.html); return;
        case 'insertBefore': node.before(item.html); return;
        case 'insertAfter': node.after(item.html); return;
        case 'wrapInnerHtml': {
          // Only the opening tag is given; a closing tag in it is ignored (document 3).
          const open = item.html.replace(/<\/[^>]*>/g, '').trim();
          if (node.contents().length === 0) node.append(open);
          else node.wrapInner(open);
        }
      }
    });
  }
}

function extractFrom($: CheerioAPI, x: ExtractSpec): DomOutcome {
  const found = $(x.selector);
  if (x.attribute !== null) {
    const values: string[] = [];
    found.each((_, el) => { const v = $(el).attr(x.attribute!); if (v !== undefined) values.push(v); });
    return { html: values.join('\n'), plain: true };
  }
  const parts: string[] = [];
  found.each((_, el) => { parts.push((x.includeSelf ? $.html(el) : $(el).html()) ?? ''); });
  return { html: parts.join('\n'), plain: false };
}
