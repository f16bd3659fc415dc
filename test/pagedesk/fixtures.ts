// Shared by the pagedesk tests: a real page (the obsolete tags of document 3, links to several
// domains, scripts, images, frames) and the pagedesk setting as the loader defaults it.
import { load, type CheerioAPI } from 'cheerio/slim';
import { parseSetting } from '../../lib/setting-check/load.js';
import type { PagedeskSetting } from '../../lib/pagedesk/setting.js';

export const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Old portal</title>
  <link rel="stylesheet" href="https://cdn.partner.net/site.css">
  <script src="/js/app.js"></script>
  <script src="https://tracker.ads.example/t.js"></script>
</head>
<body>
  <center><h1 id="title">Welcome</h1></center>
  <div id="main" class="content">
    <p>Hello <font color="red">red <b>bold</b> text</font> here.</p>
    <marquee>Breaking news</marquee>
    <a id="own" href="/about.html">About</a>
    <a id="rel" href="news/today.html" target="_self">Today</a>
    <a id="partner" href="https://www.partner.net/offer">Offer</a>
    <a id="ads" href="http://ads.example/click?id=1" target="main">Ad</a>
    <a id="mail" href="mailto:info@a.com">Mail</a>
    <img id="logo" src="/img/logo.png" alt="logo">
    <img id="hot" src="https://images.other.org/pic.jpg" alt="hotlinked">
    <img id="cdn" src="//cdn.partner.net/banner.png" alt="partner banner">
    <applet code="Old.class" width="10" height="10"><param name="a" value="b"></applet>
    <frameset><frame src="https://frames.other.org/f.html"></frameset>
  </div>
  <div class="content" id="second"><span>Two</span></div>
  <iframe id="frame" src="https://video.other.org/embed/1"></iframe>
</body>
</html>
`;

/** The pagedesk setting of `partial` with every default, validated as a loaded setting is. */
export function pagedesk(partial: Record<string, unknown>): PagedeskSetting {
  const s = parseSetting({ hosting: [{ name: 'a.com', origin: { address: ['127.0.0.1:8080'] } }], functions: { contents: { pagedesk: partial } } });
  return s.functions.contents.pagedesk;
}

export function dom(html: string): CheerioAPI {
  return load(html, { xml: { xmlMode: false } }, false);
}
