// Black-box: pagedesk (document 3) through the real server: every command shape, the edit cached
// under its own key with the source asked of the origin once, a purge of the source taking its
// edits, the marker and size rules, and serving going on while a 10 MB page is edited.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { load } from 'cheerio/slim';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { PAGE } from '../pagedesk/fixtures.js';

const MARKER = '<!-- // through svc pagedesk // -->';
const html = (body: string) => ({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'max-age=600', 'content-length': String(Buffer.byteLength(body)) });

const MARKED = `${MARKER}\n<p><font>kept</font></p>`;
const LARGE = `<p>${'y'.repeat(1536 * 1024)}</p><font>f</font>`;
// 10 MB: a deep nest and many small elements, the kind of page that takes the parser a while.
const HUGE = `${'<div>'.repeat(2000)}${'<p class="r"><font>x</font><a href="https://o.example/">l</a></p>'.repeat(150_000)}${'</div>'.repeat(2000)}`;
let hugeSent = false;

const origin = await new TestOrigin().start();
origin.on('/page.html', (_req, res) => { res.writeHead(200, html(PAGE)); res.end(PAGE); });
let page2 = 'one';
origin.on('/page2.html', (req, res) => {
  if (req.method === 'PUT') { page2 = req.body.toString(); res.writeHead(204); res.end(); return; }
  const body = `<p id="v">${page2}</p>`;
  res.writeHead(200, html(body)); res.end(body);
});
origin.on('/marked.html', (_req, res) => { res.writeHead(200, html(MARKED)); res.end(MARKED); });
origin.on('/large.html', (_req, res) => { res.writeHead(200, html(LARGE)); res.end(LARGE); });
origin.on('/huge.html', (_req, res) => { res.writeHead(200, html(HUGE)); res.end(HUGE, () => { hugeSent = true; }); });
origin.on('/logo.png', (_req, res) => { res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'max-age=600', 'content-length': '4' }); res.end('\x89PNG'); });

const pagedesk = {
  meta: { enable: true },
  template: {
    enable: true,
    list: [
      { name: 'notice', body: '<p class="notice">${URL} is not available</p>' },
      { name: 'info', type: 'json', body: '{"url":"${URL}"}' },
    ],
  },
  html: { enable: true },
  dom: {
    extract: { enable: true, selector: '#main' },
    remove: { enable: true, elements: ['applet', 'frameset', 'marquee', { tag: 'font', includeChild: false }, { tag: 'center', includeChild: false }] },
    anchor: { enable: true },
    insert: { enable: true, list: [{ selector: 'body', html: '<footer id="svc">edited</footer>' }] },
    refctrl: { enable: true, domains: ['*.partner.net'], tags: [{ name: 'img', action: 'removeTag' }] },
  },
};
const port = await freePort();
const host = (name: string, p: unknown) => ({ name, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] }, functions: { contents: { pagedesk: p } } });
const udpPort = await freePort();
const server = await startServer([
  host('a.com', pagedesk),
  host('big.com', { meta: { enable: true, maxSourceSize: 20 }, html: { enable: true }, dom: { remove: { enable: true, elements: ['font'] } } }),
  host('plain.com', { meta: { enable: true } }),
  { ...host('nc.com', { meta: { enable: true } }), functions: { contents: { pagedesk: { meta: { enable: true } } }, network: { http: { frontEnd: { bypass: { matchingList: [{ pattern: '$URLMATCH[^nc\\.com/live/]' }] } } } } } },
], { extra: { env: { log: { meta: { port: udpPort }, error: { enable: true } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(server.dir, { recursive: true, force: true }); });
const errorLines = (): string[] => {
  const file = path.join(server.dir, 'svclog', 'error.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : [];
};

interface Got { status: number; type: string; cache: string; text: string }
async function get(h: string, path: string, opts: { method?: 'GET' | 'POST' | 'PUT'; body?: string; type?: string } = {}): Promise<Got> {
  const headers: Record<string, string> = { host: h };
  if (opts.type !== undefined) headers['content-type'] = opts.type;
  const r = await request(`http://127.0.0.1:${port}${path}`, { method: opts.method ?? 'GET', headers, body: opts.body ?? null });
  return { status: r.statusCode, type: String(r.headers['content-type']), cache: String(r.headers['x-cache']), text: await r.body.text() };
}
const api = async (path: string) => {
  const r = await request(`http://127.0.0.1:${server.apiPort}${path}`);
  return { status: r.statusCode, json: await r.body.json() as Record<string, any> };
};
const dom = (text: string) => load(text, { xml: { xmlMode: false } }, false);

t.test('edit/default answers the edited page: marker first, every enabled section applied', async (t) => {
  const r = await get('a.com', '/page.html/pagedesk/edit/default');
  t.equal(r.status, 200);
  t.match(r.type, /^text\/html/);
  t.equal(r.text.split('\n')[0], MARKER);
  const $ = dom(r.text);
  for (const tag of ['applet', 'frameset', 'marquee', 'font', 'center']) t.equal($(tag).length, 0, `no ${tag}`);
  t.equal($('p b').text(), 'bold');
  t.equal($('a[target="_blank"]').length, 4, 'every link with a host opens in _blank');
  t.equal($('body > footer#svc').length, 1);
  t.equal($('#hot').length, 0, 'the hotlinked image is gone');
  t.equal($('#logo').length, 1);
  t.equal($('#cdn').length, 1);
  t.equal(r.cache, 'TCP_MISS');
});

t.test('the edit is cached under its own key and the origin is asked once for the source however many edits are served', async (t) => {
  const again = await get('a.com', '/page.html/pagedesk/edit/default');
  t.equal(again.cache, 'TCP_HIT');
  t.equal(again.text.split('\n')[0], MARKER);
  const source = await get('a.com', '/page.html');
  t.equal(source.cache, 'TCP_HIT', 'the source went through the normal cache');
  t.equal(source.text, PAGE, 'the source itself is served unedited');
  const x = await get('a.com', '/page.html/pagedesk/edit/default/extract/default');
  t.equal(x.status, 200);
  t.equal(origin.count('/page.html'), 1);
  const info = await api('/monitoring/fileinfo?url=a.com/page.html/pagedesk/edit/default');
  t.equal(info.status, 200, 'fileinfo knows the edit URL');
  t.match(info.json.result[0], { URI: '/page.html/pagedesk/edit/default', State: 'Cached', ContentType: 'text/html; charset=utf-8' });
  t.equal((await api('/monitoring/fileinfo?url=a.com/page.html')).status, 200);
});

t.test('extract/default returns the children of dom.extract.selector, after the other sections', async (t) => {
  const r = await get('a.com', '/page.html/pagedesk/edit/default/extract/default');
  t.equal(r.text.split('\n')[0], MARKER);
  const $ = dom(r.text);
  t.equal($('div#main').length, 0, 'includeSelf false: the element itself is not there');
  t.equal($('a#own').attr('target'), '_blank');
  t.equal($('marquee').length, 0);
  t.equal($('title').length, 0);
});

t.test('inline extraction: :id with includeSelf, a tag with an attribute as plain text', async (t) => {
  const self = await get('a.com', '/page.html/pagedesk/edit/default/extract/selector=:main;includeSelf=true');
  t.equal(dom(self.text)('div#main').length, 1);
  const attr = await get('a.com', '/page.html/pagedesk/edit/default/extract/selector=a;attribute=href');
  t.match(attr.type, /^text\/plain/);
  t.equal(attr.text, '/about.html\nnews/today.html\nhttps://www.partner.net/offer\nhttp://ads.example/click?id=1\nmailto:info@a.com');
  const cls = await get('a.com', '/page.html/pagedesk/edit/default/extract/selector=.content');
  t.equal(dom(cls.text)('span').text(), 'Two');
  t.equal(origin.count('/page.html'), 1);
});

t.test('edit/query edits the HTML of a text/plain POST body', async (t) => {
  const r = await get('a.com', '/any/pagedesk/edit/query', { method: 'POST', type: 'text/plain; charset=utf-8', body: '<div><center>c</center><a href="http://x.org/">x</a></div>' });
  t.equal(r.status, 200);
  const $ = dom(r.text);
  t.equal(r.text.split('\n')[0], MARKER);
  t.equal($('center').length, 0);
  t.equal($('a').attr('target'), '_blank');
  t.equal(origin.count('/any'), 0, 'no origin request');
  t.equal((await get('a.com', '/any/pagedesk/edit/query')).status, 405);
  t.equal((await get('a.com', '/any/pagedesk/edit/query', { method: 'POST', type: 'application/json', body: '{}' })).status, 415);
});

t.test('a template answers without the origin, ${URL} replaced by the request URL', async (t) => {
  const r = await get('a.com', '/img/1.png/pagedesk/edit/default/template/notice');
  t.equal(r.status, 200);
  t.match(r.type, /^text\/html/);
  t.equal(dom(r.text)('p.notice').text(), 'http://a.com/img/1.png is not available');
  const j = await get('a.com', '/img/1.png/pagedesk/edit/default/template/info');
  t.match(j.type, /^application\/json/);
  t.strictSame(JSON.parse(j.text), { url: 'http://a.com/img/1.png' });
  const x = await get('a.com', '/img/1.png/pagedesk/edit/default/template/notice?a=1&b=2');
  t.match(x.text, 'http://a.com/img/1.png?a=1&amp;b=2 is not available', 'the URL (with the query after the command) is written as escaped text');
  t.equal(origin.count('/img/1.png'), 0);
  t.equal((await get('a.com', '/img/1.png/pagedesk/edit/default/template/none')).status, 404);
});

t.test('a source already carrying the marker is served as it came', async (t) => {
  const r = await get('a.com', '/marked.html/pagedesk/edit/default');
  t.equal(r.text, MARKED);
});

t.test('a source over maxSourceSize (MiB) passes through unedited; so does one that is not text', async (t) => {
  const r = await get('a.com', '/large.html/pagedesk/edit/default');
  t.equal(r.status, 200);
  t.equal(r.text.length, LARGE.length);
  t.notOk(r.text.startsWith(MARKER));
  await until(() => errorLines().some((l) => l.includes(' 6001 a.com ')), 'the 6001 line', 20_000);
  t.match(errorLines().find((l) => l.includes(' 6001 a.com '))!, /\/large\.html\/pagedesk\/edit\/default .*source larger than maxSourceSize 1 MiB: passed through unedited/);
  const png = await get('a.com', '/logo.png/pagedesk/edit/default');
  t.equal(png.type, 'image/png');
  t.equal(png.status, 200);
  t.notOk(png.text.startsWith(MARKER));
});

t.test('bad commands are 400; extraction on a host without dom.extract is 403; other methods 405', async (t) => {
  t.equal((await get('a.com', '/page.html/pagedesk/edit/nothing')).status, 400);
  t.equal((await get('a.com', '/page.html/pagedesk/edit/default/extract/selector=a>b')).status, 400);
  t.equal((await get('plain.com', '/page.html/pagedesk/edit/default/extract/default')).status, 403);
  t.equal((await get('a.com', '/page.html/pagedesk/edit/default', { method: 'POST', type: 'text/plain', body: 'x' })).status, 405);
});

t.test('a purge of the source drops its edits: the next edit asks the origin again', async (t) => {
  t.equal((await get('a.com', '/page.html/pagedesk/edit/default')).cache, 'TCP_HIT');
  const p = await api('/command/purge?url=a.com/page.html');
  t.equal(p.status, 200);
  t.ok(p.json.result.Count >= 2, `source and edits purged (${p.json.result.Count})`);
  const r = await get('a.com', '/page.html/pagedesk/edit/default');
  t.not(r.cache, 'TCP_HIT');
  t.equal(r.text.split('\n')[0], MARKER);
  t.equal(origin.count('/page.html'), 2);
});

t.test('an edit URL under a bypass rule is still edited, only not cached', async (t) => {
  for (let i = 0; i < 2; i++) {
    const r = await get('nc.com', '/live/x.txt/pagedesk/edit/default');
    t.equal(r.text, `${MARKER}\norigin:GET /live/x.txt`);
  }
  t.equal(origin.count('/live/x.txt'), 2, 'the source is asked each time');
  t.equal(origin.seen.filter((s) => s.url.startsWith('/live/x.txt/')).length, 0, 'never the edit URL');
});

t.test('a successful PUT of the source makes its edits stale: the next edit shows the new source', async (t) => {
  t.equal(dom((await get('a.com', '/page2.html/pagedesk/edit/default')).text)('#v').text(), 'one');
  t.equal((await get('a.com', '/page2.html/pagedesk/edit/default')).cache, 'TCP_HIT');
  t.equal((await get('a.com', '/page2.html', { method: 'PUT', type: 'text/plain', body: 'two' })).status, 204);
  const r = await get('a.com', '/page2.html/pagedesk/edit/default');
  t.not(r.cache, 'TCP_HIT');
  t.equal(dom(r.text)('#v').text(), 'two');
});

t.test('hits on other URLs are answered while a 10 MB page is being edited', async (t) => {
  await get('a.com', '/page.html');
  t.equal((await get('a.com', '/page.html')).cache, 'TCP_HIT');
  let editDone = false;
  const edit = get('big.com', '/huge.html/pagedesk/edit/default').then((r) => { editDone = true; return r; });
  await until(() => hugeSent, 'the origin sent the 10 MB source', 60_000);
  let served = 0;
  for (let i = 0; i < 20 && !editDone; i++) {
    const r = await get('a.com', '/page.html');
    if (r.status === 200 && r.cache === 'TCP_HIT') served++;
  }
  t.notOk(editDone, 'the edit was still in progress');
  t.equal(served, 20, 'every hit was answered meanwhile');
  const r = await edit;
  t.equal(r.status, 200);
  t.ok(r.text.length > 5_000_000, 'the page came back (edited, or unedited when over the edit time)');
});
