// In-process: the command shapes of document 3 ("Endpoints"), the setting checks that refuse what
// an edit could not carry out, and the purge targets that take a source's edits with it.
import t from 'tap';
import { CommandError, commandAt, parseCommand } from '../../lib/pagedesk/command.js';
import { withEditTargets } from '../../lib/pagedesk/targets.js';
import { parseTargets } from '../../lib/cache/commands/targets.js';
import { issuesOf } from '../setting/fixtures/helpers.js';

const parse = (url: string, kw = 'pagedesk') => parseCommand(url, kw, commandAt(url, kw));

t.test('every command shape is recognised with its source URL', async (t) => {
  t.strictSame(parse('/a/b.html/pagedesk/edit/default'), { source: '/a/b.html', command: { kind: 'default' } });
  t.strictSame(parse('/form/pagedesk/edit/query'), { source: '/form', command: { kind: 'query' } });
  t.strictSame(parse('/img/1.png/pagedesk/edit/default/template/notice'), { source: '/img/1.png', command: { kind: 'template', name: 'notice' } });
  t.strictSame(parse('/a.html/pagedesk/edit/default/extract/default'), { source: '/a.html', command: { kind: 'extract', inline: undefined } });
  t.strictSame(parse('/a.html/pagedesk/edit/default/extract/selector=:main;attribute=data-x;includeSelf=true'),
    { source: '/a.html', command: { kind: 'extract', inline: { selector: '#main', attribute: 'data-x', includeSelf: true } } });
  t.strictSame(parse('/a.html/pagedesk/edit/default/extract/selector=.content').command, { kind: 'extract', inline: { selector: '.content', attribute: null, includeSelf: false } });
  t.strictSame(parse('/a.html/pagedesk/edit/default/extract/selector=div').command, { kind: 'extract', inline: { selector: 'div', attribute: null, includeSelf: false } });
});

t.test('a query belongs to the source whether written before or after the command', async (t) => {
  t.equal(parse('/a.html/pagedesk/edit/default?x=1').source, '/a.html?x=1');
  t.equal(parse('/a.html?x=1/pagedesk/edit/default').source, '/a.html?x=1');
  t.equal(parse('/pagedesk/edit/default').source, '/');
  t.equal(parse('/a.html/pd/edit/default', 'pd').source, '/a.html');
});

t.test('a URL without the keyword segment is no command', async (t) => {
  t.equal(commandAt('/a.html', 'pagedesk'), -1);
  t.equal(commandAt('/pagedesk.html', 'pagedesk'), -1);
});

t.test('unknown shapes and bad inline parts are refused', async (t) => {
  for (const url of ['/a/pagedesk/edit/other', '/a/pagedesk/edit/default/template/', '/a/pagedesk/edit/default/extract/selector=#x',
    '/a/pagedesk/edit/default/extract/selector=a>b', '/a/pagedesk/edit/default/extract/attribute=src', '/a/pagedesk/edit/default/extract/selector=p;includeSelf=yes',
    '/a/pagedesk/edit/default/extract/selector=p;color=red']) {
    t.throws(() => parse(url), CommandError, url);
  }
});

t.test('an exact purge target of a pagedesk host also names its edit URLs; patterns and other hosts are left as they are', async (t) => {
  const targets = parseTargets('a.com/x/page.html|a.com/dir/*|b.com/y.html|a.com/q.html?id=3', (n) => (n === 'a.com' || n === 'b.com' ? n : undefined), undefined);
  const out = withEditTargets(targets, (v) => (v === 'a.com' ? 'pagedesk' : undefined));
  t.equal(out.length, 6);
  const edits = out.slice(4);
  t.match(edits[0], { vhost: 'a.com', prefix: '/x/page.html/pagedesk/edit', wildcard: true });
  t.ok(edits[0]!.match!.test('/x/page.html/pagedesk/edit/default'));
  t.ok(edits[0]!.match!.test('/x/page.html/pagedesk/edit/default/extract/selector=:main'));
  t.notOk(edits[0]!.match!.test('/x/page.html/pagedesk/edit/default?x=1'), 'the edits of another query are not the edits of this source');
  t.ok(edits[1]!.match!.test('/q.html/pagedesk/edit/default?id=3'));
  t.notOk(edits[1]!.match!.test('/q.html/pagedesk/edit/default?id=33'));
});

const withPagedesk = (p: Record<string, unknown>) => ({ hosting: [{ name: 'a.com', origin: { address: ['127.0.0.1:8080'] }, functions: { contents: { pagedesk: p } } }] });

t.test('settings an edit could not carry out are refused at their JSON path', async (t) => {
  const at = 'hosting[0].functions.contents.pagedesk';
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ meta: { urlScheme: 'ftp' } }, `${at}.meta.urlScheme`],
    [{ meta: { keyword: 'a/b' } }, `${at}.meta.keyword`],
    [{ replace: { pre: { enable: true, list: [{ src: '(' , dest: '' }] } } }, `${at}.replace.pre.list[0]`],
    [{ replace: { post: { list: [{ src: 'a', dest: '', flags: 'q' }] } } }, `${at}.replace.post.list[0]`],
    [{ html: { enable: true, in: { at: 'a..b' } } }, `${at}.html.in.at`],
    [{ html: { enable: true, out: { at: 'x' } } }, `${at}.html.out.at`],
    [{ dom: { remove: { enable: true, elements: ['font'] } } }, `${at}.dom.remove.enable`],
    [{ html: { enable: true }, dom: { extract: { enable: true } } }, `${at}.dom.extract.selector`],
    [{ html: { enable: true }, dom: { insert: { list: [{ selector: 'div[', html: '' }] } } }, `${at}.dom.insert.list[0].selector`],
    [{ html: { enable: true }, dom: { anchor: { matchingList: [{ domain: '[' }] } } }, `${at}.dom.anchor.matchingList[0].domain`],
    [{ html: { enable: true }, dom: { refctrl: { tags: [{ name: 'img', action: 'replaceAttr' }] } } }, `${at}.dom.refctrl.tags[0].replaceAttr`],
    [{ html: { enable: true }, dom: { refctrl: { tags: [{ name: 'img', action: 'insertAttr' }] } } }, `${at}.dom.refctrl.tags[0].insertAttr`],
    [{ template: { list: [{ name: 'a', body: '' }, { name: 'a', body: '' }] } }, `${at}.template.list[1].name`],
  ];
  for (const [p, path] of cases) t.ok(issuesOf(withPagedesk(p)).some((i) => i.path === path), `${JSON.stringify(p)} -> ${path}`);
  t.strictSame(issuesOf(withPagedesk({ meta: { enable: true, urlScheme: 'https' }, html: { enable: true }, dom: { remove: { enable: true, elements: ['font'] } } })), []);
});
