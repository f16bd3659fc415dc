// The pagedesk selectors are checked when the setting loads (cheerio's parser, loaded by the
// first selector to check rather than by every worker): a bad one is refused with its path.
import t from 'tap';
import { parseSetting } from '../../lib/setting-check/load.js';

const withSelector = (selector: string): unknown => ({
  hosting: [{ name: 'a.com', origin: { address: ['127.0.0.1:8080'] } }],
  functions: { contents: { pagedesk: { html: { enable: true }, dom: { extract: { enable: true, selector } } } } },
});

t.test('a setting whose DOM extract selector is not CSS is refused with the field path, a valid one is taken', async (t) => {
  t.throws(() => parseSetting(withSelector('div[')), {
    code: 'SETTING_INVALID',
    issues: [{ path: 'functions.contents.pagedesk.dom.extract.selector', message: /^not a CSS selector/ }],
  });
  const s = parseSetting(withSelector('div.content > p'));
  t.equal(s.functions.contents.pagedesk.dom.extract.selector, 'div.content > p');
});
