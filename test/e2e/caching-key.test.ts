// Black-box: functions.network.cache.cachingKey through the real server and a
// scripted origin that records what it received: query strings sorted, ignored, kept or left out
// of the key, case folding, header values in the key, POST answers cached by body within
// bodyContentLengthMax, and invalidation (management API and PURGE) reaching the keyed copies.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const origin = await new TestOrigin().start();
let served = 0;
origin.otherwise((req, res) => {
  served++;
  const body = `${req.method} ${req.url} #${served} ${req.body.toString()}`;
  res.writeHead(200, { 'cache-control': 'max-age=600', 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const at = `127.0.0.1:${origin.port}`;
const host = (name: string, cachingKey: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name, listen: `127.0.0.1:${port}`, origin: { address: [at] },
  functions: { network: { cache: { cachingKey, enablePurgeMethod: true }, ...extra } },
});
const server = await startServer([
  host('sorted.test', { queryString: { sort: true, ignore: ['utm_source'] } }),
  host('nocase.test', { caseSensitive: false }),
  host('noquery.test', { queryString: { enable: false } }),
  host('keep.test', { queryString: { keep: ['id'] } }),
  host('device.test', { headers: ['X-Device'] }),
  host('post.test', { postMethod: { enable: true, bodySensitive: true, bodyContentLengthMax: 64 } }, { http: { frontEnd: { bypass: { postMethod: { enable: false } } } } }),
  host('anypost.test', { postMethod: { enable: true, bodySensitive: false, bodyContentLengthMax: 1024 } }, { http: { frontEnd: { bypass: { postMethod: { enable: false } } } } }),
  host('plain.test', {}),
]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

async function send(h: string, path: string, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}) {
  const r = await request(`http://127.0.0.1:${port}${path}`, {
    method: (opts.method ?? 'GET') as 'GET', headers: { host: h, ...opts.headers }, ...(opts.body === undefined ? {} : { body: opts.body }),
  });
  return { status: r.statusCode, cache: String(r.headers['x-cache']), body: await r.body.text() };
}
const api = async (path: string) => {
  const r = await request(`http://127.0.0.1:${server.apiPort}${path}`);
  return JSON.parse(await r.body.text()) as { result: { Count: number } };
};
const seen = (path: string) => origin.seen.filter((s) => s.url.split('?')[0] === path);

t.test('parameters in another order, or with an ignored one, share one stored copy; the origin gets the URL as sent', async (t) => {
  const a = await send('sorted.test', '/s?b=2&a=1');
  t.equal(a.cache, 'TCP_MISS');
  const b = await send('sorted.test', '/s?a=1&utm_source=mail&b=2');
  t.equal(b.cache, 'TCP_HIT');
  t.equal(b.body, a.body);
  t.strictSame(seen('/s').map((s) => s.url), ['/s?b=2&a=1']);
  t.equal((await send('sorted.test', '/s?a=1&b=3')).cache, 'TCP_MISS', 'another value is another key');
});

t.test('the same URL without a sorting rule keeps parameter order in its key', async (t) => {
  await send('plain.test', '/o?b=2&a=1');
  t.equal((await send('plain.test', '/o?a=1&b=2')).cache, 'TCP_MISS');
});

t.test('caseSensitive false folds path and query into one key', async (t) => {
  t.equal((await send('nocase.test', '/Img/Logo.PNG')).cache, 'TCP_MISS');
  t.equal((await send('nocase.test', '/img/logo.png')).cache, 'TCP_HIT');
  t.equal(seen('/Img/Logo.PNG').length, 1);
  t.equal(seen('/img/logo.png').length, 0);
});

t.test('queryString.enable false leaves the query out of the key, keep keeps only the named parameters', async (t) => {
  await send('noquery.test', '/q?v=1');
  const r = await send('noquery.test', '/q?v=2');
  t.equal(r.cache, 'TCP_HIT');
  t.match(r.body, 'GET /q?v=1 ');
  await send('keep.test', '/k?id=7&session=a');
  t.equal((await send('keep.test', '/k?session=b&id=7')).cache, 'TCP_HIT');
  t.equal((await send('keep.test', '/k?id=8&session=a')).cache, 'TCP_MISS');
});

t.test('a header named in the key stores one copy per value', async (t) => {
  const m = await send('device.test', '/d', { headers: { 'x-device': 'mobile' } });
  const d = await send('device.test', '/d', { headers: { 'x-device': 'desktop' } });
  t.equal(m.cache, 'TCP_MISS');
  t.equal(d.cache, 'TCP_MISS');
  t.not(m.body, d.body);
  const again = await send('device.test', '/d', { headers: { 'x-device': 'mobile' } });
  t.equal(again.cache, 'TCP_HIT');
  t.equal(again.body, m.body);
  t.equal(seen('/d').length, 2);
});

t.test('a purge of the URL as a client writes it reaches the copy stored under the normalised key', async (t) => {
  await send('sorted.test', '/p?y=1&x=1');
  t.equal((await send('sorted.test', '/p?x=1&y=1')).cache, 'TCP_HIT');
  t.equal((await api('/command/purge?url=sorted.test/p?x=1%26utm_source=z%26y=1')).result.Count, 1);
  t.equal((await send('sorted.test', '/p?y=1&x=1')).cache, 'TCP_REFRESH_MISS');
  await send('nocase.test', '/Case/X');
  const purge = await send('nocase.test', '/CASE/x', { method: 'PURGE' });
  t.equal(purge.status, 200, purge.body);
  t.match(JSON.parse(purge.body), { result: { Count: 1 } });
  t.equal((await send('nocase.test', '/case/x')).cache, 'TCP_REFRESH_MISS');
});

t.test('POST answers are cached by body: the same body hits, another body misses, the origin gets POST with the body', async (t) => {
  const a = await send('post.test', '/api', { method: 'POST', body: '{"q":1}', headers: { 'content-type': 'application/json' } });
  t.equal(a.cache, 'TCP_MISS');
  t.match(a.body, 'POST /api #');
  t.match(a.body, '{"q":1}');
  const b = await send('post.test', '/api', { method: 'POST', body: '{"q":1}', headers: { 'content-type': 'application/json' } });
  t.equal(b.cache, 'TCP_HIT');
  t.equal(b.body, a.body);
  const c = await send('post.test', '/api', { method: 'POST', body: '{"q":2}', headers: { 'content-type': 'application/json' } });
  t.equal(c.cache, 'TCP_MISS');
  t.match(c.body, '{"q":2}');
  const posts = seen('/api');
  t.strictSame(posts.map((s) => [s.method, s.body.toString()]), [['POST', '{"q":1}'], ['POST', '{"q":2}']]);
  t.equal((await send('post.test', '/api')).cache, 'TCP_MISS', 'a GET of the URL is another key');
});

t.test('a POST body over bodyContentLengthMax passes through uncached every time', async (t) => {
  const big = 'x'.repeat(65);
  const before = seen('/big').length;
  const a = await send('post.test', '/big', { method: 'POST', body: big });
  const b = await send('post.test', '/big', { method: 'POST', body: big });
  t.equal(a.status, 200);
  t.not(b.body, a.body, 'each one answered by the origin');
  t.equal(seen('/big').length - before, 2);
  t.strictSame(seen('/big').map((s) => s.body.length), [65, 65]);
});

t.test('without bodySensitive every POST to a URL shares one answer; concurrent ones share one origin request', async (t) => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => { release = r; });
  origin.on('/slow', (req, res) => {
    void gate.then(() => {
      const body = `slow ${req.body.toString()}`;
      res.writeHead(200, { 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  // One connection each, all waiting on one origin request.
  const all = Promise.all([1, 2, 3, 4].map((i) => send('anypost.test', '/slow', { method: 'POST', body: `b${i}` })));
  t.ok(await waitFor(() => seen('/slow').length > 0), 'the origin got the first POST');
  release();
  const answers = await all;
  t.equal(seen('/slow').length, 1, 'one origin request for 4 POSTs');
  const after = await send('anypost.test', '/slow', { method: 'POST', body: 'other' });
  t.equal(after.cache, 'TCP_HIT');
  t.ok(answers.some((a) => a.body === after.body));
});

t.test('a purge of the URL also purges the POST answers cached under it', async (t) => {
  await send('post.test', '/purged', { method: 'POST', body: 'z' });
  t.equal((await send('post.test', '/purged', { method: 'POST', body: 'z' })).cache, 'TCP_HIT');
  t.equal((await api('/command/purge?url=post.test/purged')).result.Count, 1);
  t.equal((await send('post.test', '/purged', { method: 'POST', body: 'z' })).cache, 'TCP_REFRESH_MISS');
});
