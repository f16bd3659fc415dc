// RFC 9111 4.1: a response with Vary is reused only for requests whose nominated fields match;
// Accept-Encoding is reduced to the set of known codings the client accepts (lib/cache/policy/vary.ts).
import t from 'tap';
import type { SeenRequest } from '../../helpers/origin.js';
import { rawRequest } from '../../helpers/raw-client.js';
import { until, waitFor } from '../../helpers/wait.js';
import { cacheBench, HOST, reply } from './fixtures/bench.js';

const { origin, get, port } = await cacheBench();
const seenOf = (path: string): SeenRequest[] => origin.seen.filter((s) => s.url === path);

/** The origin answers per Accept-Encoding, so the body tells which variant a client got. */
const byEncoding = (q: SeenRequest, res: import('node:http').ServerResponse): void =>
  reply(200, { vary: 'Accept-Encoding', 'cache-control': 'max-age=60' }, `enc=${String(q.headers['accept-encoding'] ?? 'none')}`)(q, res);

t.test('one variant is stored per Accept-Encoding: gzip and br are each fetched once, then hits', async (t) => {
  origin.on('/enc', byEncoding);
  const g1 = await get('/enc', { 'accept-encoding': 'gzip' });
  const b1 = await get('/enc', { 'accept-encoding': 'br' });
  const g2 = await get('/enc', { 'accept-encoding': 'gzip' });
  const b2 = await get('/enc', { 'accept-encoding': 'br' });
  t.equal(g1.body, 'enc=gzip');
  t.equal(b1.body, 'enc=br');
  t.equal(b1.headers['x-cache'], 'TCP_MISS', 'br is not served the gzip variant');
  t.equal(g2.body, 'enc=gzip');
  t.equal(g2.headers['x-cache'], 'TCP_HIT');
  t.equal(b2.body, 'enc=br');
  t.equal(b2.headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/enc'), 2);
});

t.test('Accept-Encoding spellings that accept the same codings share one variant', async (t) => {
  origin.on('/enc-norm', byEncoding);
  const a = await get('/enc-norm', { 'accept-encoding': 'gzip, deflate' });
  const b = await get('/enc-norm', { 'accept-encoding': 'deflate, gzip' });
  const c = await get('/enc-norm', { 'accept-encoding': 'GZIP;q=1.0, deflate;q=0.5' });
  t.equal(a.body, 'enc=gzip, deflate');
  t.equal(b.headers['x-cache'], 'TCP_HIT');
  t.equal(b.body, 'enc=gzip, deflate');
  t.equal(c.headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/enc-norm'), 1);
  const id = await get('/enc-norm');
  t.equal(id.body, 'enc=none', 'no Accept-Encoding (identity) is another variant');
  const br = await get('/enc-norm', { 'accept-encoding': 'gzip, deflate, br' });
  t.equal(br.body, 'enc=gzip, deflate, br', 'a list that also allows br: another variant');
  t.equal(origin.count('/enc-norm'), 3);
});

t.test('a zstd answer fetched for Chrome is not served to Safari, which does not accept zstd', async (t) => {
  origin.on('/enc-zstd', (q, res) => {
    const ae = String(q.headers['accept-encoding'] ?? '');
    const coding = ae.includes('zstd') ? 'zstd' : ae.includes('br') ? 'br' : undefined;
    reply(200, { vary: 'Accept-Encoding', 'cache-control': 'max-age=60', ...(coding ? { 'content-encoding': coding } : {}) }, `coded ${coding ?? 'none'}`)(q, res);
  });
  const chrome = await get('/enc-zstd', { 'accept-encoding': 'gzip, deflate, br, zstd' });
  t.equal(chrome.headers['content-encoding'], 'zstd');
  const safari = await get('/enc-zstd', { 'accept-encoding': 'gzip, deflate, br' });
  t.equal(safari.headers['content-encoding'], 'br', 'Safari gets br');
  t.equal(safari.body, 'coded br');
  const chrome2 = await get('/enc-zstd', { 'accept-encoding': 'gzip, deflate, br, zstd' });
  t.equal(chrome2.headers['content-encoding'], 'zstd');
  t.equal(chrome2.headers['x-cache'], 'TCP_HIT');
  const safari2 = await get('/enc-zstd', { 'accept-encoding': 'br, gzip, deflate' });
  t.equal(safari2.headers['content-encoding'], 'br');
  t.equal(safari2.headers['x-cache'], 'TCP_HIT');
  t.equal(origin.count('/enc-zstd'), 2);
});

t.test('a stored coding the variant key does not know is only served to clients that accept it', async (t) => {
  origin.on('/enc-compress', (q, res) => {
    const ae = String(q.headers['accept-encoding'] ?? '');
    reply(200, { vary: 'Accept-Encoding', 'cache-control': 'max-age=60', ...(ae === '*' ? { 'content-encoding': 'compress' } : {}) }, ae)(q, res);
  });
  t.equal((await get('/enc-compress', { 'accept-encoding': '*' })).headers['content-encoding'], 'compress');
  const refusing = await get('/enc-compress', { 'accept-encoding': '*, compress;q=0' });
  t.equal(refusing.headers['content-encoding'], undefined, 'same variant key, but compress is refused: fetched again');
  t.equal(origin.count('/enc-compress'), 2);
});

t.test('Vary: * is never reused', async (t) => {
  origin.on('/vary-star', reply(200, { vary: '*', 'cache-control': 'max-age=60' }, 'star'));
  for (let i = 0; i < 3; i++) {
    const r = await get('/vary-star');
    t.equal(r.body, 'star');
    t.not(r.headers['x-cache'], 'TCP_HIT');
  }
  t.equal(origin.count('/vary-star'), 3);
});

t.test('Vary on a custom header keys the variants by its value', async (t) => {
  origin.on('/vary-custom', (q, res) =>
    reply(200, { vary: 'X-Tenant', 'cache-control': 'max-age=60' }, `tenant=${String(q.headers['x-tenant'] ?? '-')}`)(q, res));
  t.equal((await get('/vary-custom', { 'x-tenant': 'a' })).body, 'tenant=a');
  t.equal((await get('/vary-custom', { 'x-tenant': 'b' })).body, 'tenant=b');
  const a2 = await get('/vary-custom', { 'x-tenant': 'a' });
  t.equal(a2.body, 'tenant=a');
  t.equal(a2.headers['x-cache'], 'TCP_HIT');
  const b2 = await get('/vary-custom', { 'x-tenant': 'b' });
  t.equal(b2.body, 'tenant=b');
  t.equal(b2.headers['x-cache'], 'TCP_HIT');
  t.equal((await get('/vary-custom')).body, 'tenant=-', 'a request without the field is its own variant');
  t.equal(origin.count('/vary-custom'), 3);
  t.same(seenOf('/vary-custom').map((s) => s.headers['x-tenant']), ['a', 'b', undefined]);
});

t.test('concurrent requests for two variants of a new URL each get their own variant', async (t) => {
  origin.on('/vary-race', (q, res) => setTimeout(() =>
    reply(200, { vary: 'X-Tenant', 'cache-control': 'max-age=60' }, `tenant=${String(q.headers['x-tenant'])}`)(q, res), 200));
  const [a, b] = await Promise.all([get('/vary-race', { 'x-tenant': 'a' }), get('/vary-race', { 'x-tenant': 'b' })]);
  t.equal(a.body, 'tenant=a');
  t.equal(b.body, 'tenant=b');
  t.equal((await get('/vary-race', { 'x-tenant': 'b' })).body, 'tenant=b');
  t.equal((await get('/vary-race', { 'x-tenant': 'a' })).body, 'tenant=a');
});

t.test('a request for another variant while the first variant is still downloading gets its own variant', async (t) => {
  origin.on('/vary-slow', (q, res) => {
    res.writeHead(200, { vary: 'X-Tenant', 'cache-control': 'max-age=60', 'content-type': 'text/plain' });
    res.write(`tenant=${String(q.headers['x-tenant'])};`);
    setTimeout(() => res.end('end'), 400);
  });
  const a = get('/vary-slow', { 'x-tenant': 'a' });
  t.ok(await waitFor(() => origin.count('/vary-slow') === 1), 'the download of a has begun');
  const b = await get('/vary-slow', { 'x-tenant': 'b' });
  t.equal((await a).body, 'tenant=a;end');
  t.equal(b.body, 'tenant=b;end', 'b is not served the variant of a');
  t.equal(origin.count('/vary-slow'), 2);
});

t.test('Accept-Language values that differ only in case, spacing and weight spelling share one stored variant', async (t) => {
  origin.on('/lang-norm', (q, res) => reply(200, { vary: 'Accept-Language', 'cache-control': 'max-age=60' }, `lang=${String(q.headers['accept-language'])}`)(q, res));
  const a = await get('/lang-norm', { 'accept-language': 'en-US,en;q=0.9' });
  const b = await get('/lang-norm', { 'accept-language': 'EN-us, en;q=0.90' });
  const c = await get('/lang-norm', { 'accept-language': 'en;q=0.9, en-US' });
  t.equal(a.headers['x-cache'], 'TCP_MISS');
  t.same([b.headers['x-cache'], c.headers['x-cache']], ['TCP_HIT', 'TCP_HIT']);
  t.same([b.body, c.body], [a.body, a.body]);
  const other = await get('/lang-norm', { 'accept-language': 'de, en-US;q=0.5' });
  t.equal(other.body, 'lang=de, en-US;q=0.5', 'another preference is another variant, from the origin');
  const tie1 = await get('/lang-norm', { 'accept-language': 'da, en' });
  const tie2 = await get('/lang-norm', { 'accept-language': 'en, da' });
  t.same([tie1.body, tie2.body], ['lang=da, en', 'lang=en, da'], 'equal weights in another order are not merged');
  t.equal(origin.count('/lang-norm'), 4);
});

// RFC 9110 7.6.1: fields the client names in Connection are not forwarded, so the origin chose its
// answer without them; the stored variant must be keyed on the request as forwarded, or one client
// stores the default page as the `fr` variant for everyone.
const byLanguage = (q: SeenRequest, res: import('node:http').ServerResponse): void =>
  reply(200, { vary: 'Accept-Language', 'cache-control': 'max-age=60' }, `lang=${String(q.headers['accept-language'] ?? 'none')}`)(q, res);

async function rawGet(path: string, fields: string): Promise<{ body: string; text: string }> {
  const r = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\n${fields}Connection: close\r\n\r\n`, { timeoutMs: 10000 });
  const split = r.text.indexOf('\r\n\r\n');
  const head = r.text.slice(0, split);
  let body = r.text.slice(split + 4);
  if (/\r\ntransfer-encoding: chunked/i.test(head)) {
    let out = '';
    for (let size = parseInt(body, 16); size > 0; size = parseInt(body, 16)) {
      const start = body.indexOf('\r\n') + 2;
      out += body.slice(start, start + size);
      body = body.slice(start + size + 2);
    }
    body = out;
  }
  return { body, text: r.text };
}

t.test('a Vary field the client names in Connection does not key the stored variant: a plain fr request still gets the fr page', async (t) => {
  origin.on('/lang', byLanguage);
  const first = await rawGet('/lang', 'Accept-Language: fr\r\nConnection: accept-language\r\n');
  t.equal(first.body, 'lang=none', 'the origin never saw the field the client named in Connection');
  const fr = await get('/lang', { 'accept-language': 'fr' });
  t.equal(fr.body, 'lang=fr', 'the fr variant comes from the origin, not from the default page');
  t.equal(fr.headers['x-cache'], 'TCP_MISS');
  const none = await get('/lang');
  t.equal(none.body, 'lang=none');
  t.equal(none.headers['x-cache'], 'TCP_HIT', 'the first answer was stored as the variant without the field');
  const again = await rawGet('/lang', 'Accept-Language: fr\r\nConnection: accept-language\r\n');
  t.equal(again.body, 'lang=none', 'a request forwarded without the field is served the variant without it');
  t.same(seenOf('/lang').map((s) => s.headers['accept-language']), [undefined, 'fr']);
});

t.test('a plain fr request does not join a fetch whose client named Accept-Language in Connection', async (t) => {
  origin.on('/lang-slow', (q, res) => {
    res.writeHead(200, { vary: 'Accept-Language', 'cache-control': 'max-age=60', 'content-type': 'text/plain' });
    res.write(`lang=${String(q.headers['accept-language'] ?? 'none')};`);
    setTimeout(() => res.end('end'), 300);
  });
  const first = rawGet('/lang-slow', 'Accept-Language: fr\r\nConnection: accept-language\r\n');
  await until(() => origin.count('/lang-slow') === 1, 'the first fetch under way');
  const fr = await get('/lang-slow', { 'accept-language': 'fr' });
  t.equal(fr.body, 'lang=fr;end');
  t.equal((await first).body, 'lang=none;end');
});
