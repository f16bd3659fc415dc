// In-process: each section of pagedesk (document 3) on a real page, asserted on the output DOM.
import t from 'tap';
import { MARKER, runEdit, type EditResult } from '../../lib/pagedesk/edit.js';
import type { ExtractSpec } from '../../lib/pagedesk/command.js';
import { dom, PAGE, pagedesk } from './fixtures.js';

function edited(setting: Record<string, unknown>, text = PAGE, extract?: ExtractSpec): string {
  const r: EditResult = runEdit({ text, setting: pagedesk(setting), extract, host: 'a.com' });
  if (r.outcome !== 'edited') throw new Error(`not edited: ${JSON.stringify(r)}`);
  return r.text;
}

const HTML = { enable: true };

t.test('the output starts with the marker line and keeps the page', async (t) => {
  const out = edited({ html: HTML });
  t.equal(out.split('\n')[0], MARKER);
  const $ = dom(out);
  t.equal($('title').text(), 'Old portal');
  t.equal($('a').length, 5);
});

t.test('a source that carries the marker is not edited again', async (t) => {
  const once = edited({ html: HTML, dom: { remove: { enable: true, elements: ['font'] } } });
  const again = runEdit({ text: once, setting: pagedesk({ html: HTML, dom: { remove: { enable: true, elements: ['b'] } } }), extract: undefined, host: 'a.com' });
  t.strictSame(again, { outcome: 'marked' });
});

t.test('replace.pre applies to the source before the DOM work, replace.post to the result', async (t) => {
  const out = edited({
    html: HTML,
    replace: {
      pre: { enable: true, list: [{ src: 'Welcome', dest: 'Hello there' }, { src: 'marquee', dest: 'span', flags: 'gi' }] },
      post: { enable: true, list: [{ src: 'svc pagedesk', dest: 'svc-pagedesk' }] },
    },
    dom: { insert: { enable: true, list: [{ selector: '#title', html: '<em>!</em>' }] } },
  });
  const $ = dom(out);
  t.equal($('#title').text(), 'Hello there!', 'pre changed the text the DOM step then saw');
  t.equal($('marquee').length, 0);
  t.equal($('span').first().text(), 'Breaking news');
  t.match(out.split('\n')[0], /svc-pagedesk/, 'post ran after the marker was written');
});

t.test('replace flags without g replace the first match only', async (t) => {
  const out = edited({ replace: { pre: { enable: true, list: [{ src: 'content', dest: 'box', flags: '' }] } } });
  t.equal((out.match(/class="box"/g) ?? []).length, 1);
  t.equal((out.match(/class="content"/g) ?? []).length, 1);
});

t.test('without html.enable the text is only replaced and marked', async (t) => {
  const out = edited({ replace: { pre: { enable: true, list: [{ src: 'Old', dest: 'New' }] } } });
  t.equal(out, `${MARKER}\n${PAGE.replace(/Old/g, 'New')}`, 'flags default to g');
});

t.test('dom.remove takes tags with their children, or only the tag with includeChild false', async (t) => {
  const out = edited({ html: HTML, dom: { remove: { enable: true, elements: ['applet', 'marquee', 'frameset', { tag: 'font', includeChild: false }, { tag: 'center', includeChild: false }] } } });
  const $ = dom(out);
  for (const tag of ['applet', 'param', 'marquee', 'frameset', 'frame', 'font', 'center']) t.equal($(tag).length, 0, `no ${tag}`);
  t.equal($('p b').text(), 'bold', 'the children of an unwrapped font stay in place');
  t.match($('p').text(), /Hello red bold text here/);
  t.equal($('body > h1#title').length, 1, 'the h1 of the unwrapped center moved up to body');
});

t.test('dom.remove includeChild false on the section applies to plain tag names', async (t) => {
  const $ = dom(edited({ html: HTML, dom: { remove: { enable: true, includeChild: false, elements: ['font'] } } }));
  t.equal($('font').length, 0);
  t.equal($('p b').length, 1);
});

t.test('dom.insert appendChild, insertBefore, insertAfter and wrapInnerHtml', async (t) => {
  const $ = dom(edited({
    html: HTML,
    dom: {
      insert: {
        enable: true,
        list: [
          { selector: '#main', html: '<p id="added">last</p>' },
          { selector: '#title', action: 'insertBefore', html: '<hr id="before">' },
          { selector: '#title', action: 'insertAfter', html: '<p id="after">after</p>' },
          { selector: '#second', action: 'wrapInnerHtml', html: '<section class="wrap"></section>' },
        ],
      },
    },
  }));
  t.equal($('#main').children().last().attr('id'), 'added');
  t.equal($('#title').prev().attr('id'), 'before');
  t.equal($('#title').next().attr('id'), 'after');
  t.equal($('#second').children().length, 1);
  t.equal($('#second > section.wrap > span').text(), 'Two', 'the children are wrapped; the closing tag given was ignored');
});

t.test('dom.insert uses the section action when an item names none', async (t) => {
  const $ = dom(edited({ html: HTML, dom: { insert: { enable: true, action: 'insertAfter', list: [{ selector: 'img', html: '<i class="cap"></i>' }] } } }));
  t.equal($('img + i.cap').length, 3);
});

t.test('dom.anchor sets target _blank by default and overwrites existing targets', async (t) => {
  const $ = dom(edited({ html: HTML, dom: { anchor: { enable: true } } }));
  for (const id of ['own', 'rel', 'partner', 'ads']) t.equal($(`#${id}`).attr('target'), '_blank', id);
  t.equal($('#mail').attr('target'), undefined, 'a mailto link names no host and is left alone');
});

t.test('dom.anchor overwrite false only fills absent targets; enableLink false removes href', async (t) => {
  const $ = dom(edited({ html: HTML, dom: { anchor: { enable: true, enableLink: false, target: { framename: '_top', overwrite: false } } } }));
  t.equal($('#own').attr('target'), '_top');
  t.equal($('#rel').attr('target'), '_self');
  t.equal($('#ads').attr('target'), 'main');
  t.equal($('#partner').attr('href'), undefined);
  t.equal($('#partner').text(), 'Offer');
});

t.test('dom.anchor matchingList restricts the change to matching domains, each with its own link and target', async (t) => {
  const $ = dom(edited({
    html: HTML,
    dom: {
      anchor: {
        enable: true,
        matchingList: [
          { domain: '(^|\\.)partner\\.net$', target: { framename: 'partner', overwrite: true } },
          { domain: '^ads\\.example$', enableLink: false, target: { framename: null, overwrite: true } },
        ],
      },
    },
  }));
  t.equal($('#partner').attr('target'), 'partner');
  t.equal($('#partner').attr('href'), 'https://www.partner.net/offer');
  t.equal($('#ads').attr('href'), undefined);
  t.equal($('#ads').attr('target'), undefined, 'framename null with overwrite removes the target');
  t.equal($('#own').attr('target'), undefined, 'a link to a domain on no entry is left alone');
  t.equal($('#rel').attr('target'), '_self');
});

const REFS = [
  { name: 'img', action: 'removeTag' },
  { name: 'script', action: 'removeAttr' },
  { name: 'iframe', action: 'replaceAttr', replaceAttr: 'data-src' },
  { name: 'link', action: 'insertAttr', insertAttr: [{ name: 'disabled', value: 'disabled' }, { name: 'style', value: 'display:none' }] },
];

t.test('dom.refctrl whitelist modifies references to domains not listed, never the page\'s own', async (t) => {
  const $ = dom(edited({ html: HTML, dom: { refctrl: { enable: true, mode: 'whitelist', domains: ['*.partner.net'], tags: REFS } } }));
  t.equal($('#logo').length, 1, 'a relative reference is the page\'s own');
  t.equal($('#hot').length, 0, 'removeTag: an image from an unlisted domain is gone');
  t.equal($('#cdn').length, 1, 'a scheme-relative reference to a listed domain stays');
  t.equal($('script[src="/js/app.js"]').length, 1);
  t.equal($('script').eq(1).attr('src'), undefined, 'removeAttr: the tracker script lost its src');
  t.equal($('#frame').attr('src'), undefined);
  t.equal($('#frame').attr('data-src'), 'https://video.other.org/embed/1', 'replaceAttr renames, value kept');
  t.equal($('link').attr('style'), undefined, 'the stylesheet of a listed domain is not touched');
});

t.test('dom.refctrl blacklist modifies only references to listed domains; a tag\'s own domains replace the list', async (t) => {
  const $ = dom(edited({
    html: HTML,
    dom: {
      refctrl: {
        enable: true, mode: 'blacklist', domains: ['cdn.partner.net'],
        tags: [...REFS, { name: 'a', action: 'removeAttr', domains: ['ads.example'] }],
      },
    },
  }));
  t.equal($('#hot').length, 1);
  t.equal($('#cdn').length, 0, 'the listed domain\'s image is removed');
  t.equal($('link').attr('style'), 'display:none', 'insertAttr on the listed stylesheet');
  t.equal($('link').attr('disabled'), 'disabled');
  t.equal($('#ads').attr('href'), undefined, 'the a tag\'s own domains list applies to it');
  t.equal($('#partner').attr('href'), 'https://www.partner.net/offer');
});

t.test('extraction by selector: children only, or with the element, or an attribute value', async (t) => {
  const inner = dom(edited({ html: HTML }, PAGE, { selector: '#main', attribute: null, includeSelf: false }).replace(`${MARKER}\n`, ''));
  t.equal(inner('div#main').length, 0);
  t.equal(inner('marquee').text(), 'Breaking news');
  const self = dom(edited({ html: HTML }, PAGE, { selector: '.content', attribute: null, includeSelf: true }));
  t.equal(self('div.content').length, 2, 'every match, with its element');
  const r = runEdit({ text: PAGE, setting: pagedesk({ html: HTML }), extract: { selector: 'img', attribute: 'src', includeSelf: false }, host: 'a.com' });
  t.match(r, { outcome: 'edited', type: 'plain', text: '/img/logo.png\nhttps://images.other.org/pic.jpg\n//cdn.partner.net/banner.png' });
});

t.test('extraction runs after the other DOM sections', async (t) => {
  const out = edited({ html: HTML, dom: { remove: { enable: true, elements: ['marquee'] } } }, PAGE, { selector: '#main', attribute: null, includeSelf: true });
  t.equal(dom(out)('#main marquee').length, 0);
});

const JSON_SOURCE = JSON.stringify({ id: 7, data: { html: '&lt;p&gt;Hi &lt;font&gt;there&lt;/font&gt;&lt;/p&gt;' }, items: [{ body: '<b>x</b>' }] });

t.test('html.in.at takes escaped HTML out of JSON; html.out.at puts the edit back, escaped', async (t) => {
  const r = runEdit({
    text: JSON_SOURCE,
    setting: pagedesk({ html: { enable: true, in: { at: '$.data.html', escaped: true }, out: { at: '$.data.html', escaped: true } }, dom: { remove: { enable: true, includeChild: false, elements: ['font'] } } }),
    extract: undefined, host: 'a.com',
  });
  t.match(r, { outcome: 'edited', type: 'source' });
  const doc = JSON.parse((r as { text: string }).text) as { id: number; data: { html: string } };
  t.equal(doc.id, 7, 'the rest of the JSON is kept');
  t.equal(doc.data.html, `${'&lt;!-- // through svc pagedesk // --&gt;'}\n&lt;p&gt;Hi there&lt;/p&gt;`, 'the marker opens the string value');
});

t.test('html.in.at unescaped, out.at elsewhere unescaped; out.at null makes the HTML the output', async (t) => {
  const r = runEdit({
    text: JSON_SOURCE,
    setting: pagedesk({ html: { enable: true, in: { at: 'items[0].body', escaped: false }, out: { at: 'items[0].edited', escaped: false } }, dom: { insert: { enable: true, list: [{ selector: 'b', html: '<i>y</i>' }] } } }),
    extract: undefined, host: 'a.com',
  });
  const doc = JSON.parse((r as { text: string }).text) as { items: Array<{ body: string; edited: string }> };
  t.equal(doc.items[0]!.body, '<b>x</b>');
  t.equal(doc.items[0]!.edited, `${MARKER}\n<b>x<i>y</i></b>`);
  const plain = runEdit({ text: JSON_SOURCE, setting: pagedesk({ html: { enable: true, in: { at: 'items[0].body', escaped: false } } }), extract: undefined, host: 'a.com' });
  t.match(plain, { outcome: 'edited', type: 'html', text: `${MARKER}\n<b>x</b>` });
});

t.test('a source where html.in.at finds no string is left unedited with the reason', async (t) => {
  const r = runEdit({ text: '{"a":1}', setting: pagedesk({ html: { enable: true, in: { at: 'data.html' } } }), extract: undefined, host: 'a.com' });
  t.match(r, { outcome: 'unedited', reason: /no string/ });
  t.match(runEdit({ text: 'not json', setting: pagedesk({ html: { enable: true, in: { at: 'data.html' } } }), extract: undefined, host: 'a.com' }), { outcome: 'unedited', reason: /not JSON/ });
});

t.test('HTML over maxDomSourceSize skips the DOM sections but is still replaced and marked', async (t) => {
  const big = `<p>${'x'.repeat(2 * 1024 * 1024)}</p><font>f</font>`;
  const r = runEdit({ text: big, setting: pagedesk({ meta: { maxDomSourceSize: 1 }, html: HTML, dom: { remove: { enable: true, elements: ['font'] } }, replace: { post: { enable: true, list: [{ src: '<font>', dest: '<span>' }] } } }), extract: undefined, host: 'a.com' });
  t.match(r, { outcome: 'edited', note: /maxDomSourceSize/ });
  t.ok((r as { text: string }).text.startsWith(MARKER));
  t.match((r as { text: string }).text, /<span>f<\/font>$/);
});
