// Black-box: pagedesk under hash balance with two workers. The source of an edit is asked of its
// owner worker's cache, so it is one cached object of the node: the origin sees it once, and the
// source and its edit are each a hit afterwards, whichever worker a client reaches.
import t from 'tap';
import { Agent, request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';

const MARKER = '<!-- // through svc pagedesk // -->';
const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  const body = `<p id="p">${req.url}<font>old</font></p>`;
  res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const server = await startServer([{
  name: 'a.com', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  functions: { contents: { pagedesk: { meta: { enable: true }, html: { enable: true }, dom: { remove: { enable: true, elements: ['font'] } } } } },
}], { workers: 2, balance: 'hash' });
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** A new connection each time, so the kernel spreads the clients over both workers. */
async function get(path: string): Promise<{ status: number; cache: string; text: string }> {
  const agent = new Agent({ pipelining: 0 });
  const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: 'a.com', connection: 'close' }, dispatcher: agent });
  const out = { status: r.statusCode, cache: String(r.headers['x-cache']), text: await r.body.text() };
  await agent.close();
  return out;
}

const N = 8;

t.test('each source is asked of the origin once; its edit and itself are hits afterwards on either worker', async (t) => {
  for (let i = 0; i < N; i++) {
    const r = await get(`/s/${i}/pagedesk/edit/default`);
    t.equal(r.status, 200);
    t.equal(r.text, `${MARKER}\n<p id="p">/s/${i}</p>`);
  }
  for (let i = 0; i < N; i++) {
    t.equal((await get(`/s/${i}`)).cache, 'TCP_HIT', `source ${i} cached by its owner`);
    t.equal((await get(`/s/${i}/pagedesk/edit/default`)).cache, 'TCP_HIT', `edit ${i} cached`);
    t.equal(origin.count(`/s/${i}`), 1);
  }
  t.equal(origin.seen.filter((s) => s.url.includes('pagedesk')).length, 0, 'the origin is never asked for an edit URL');
});
