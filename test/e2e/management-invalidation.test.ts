// Black-box: the invalidation commands of the management API, proven by what the origin sees.
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

let originUp = true;
let version = 1;
const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  if (!originUp) { res.socket?.destroy(); return; }
  const etag = `"v${version}"`;
  if (req.headers['if-none-match'] === etag) { res.writeHead(304, { etag, 'cache-control': 'max-age=600' }); res.end(); return; }
  const body = `${req.url} v${version}`;
  res.writeHead(200, { etag, 'cache-control': 'max-age=600', 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const server = await startServer([
  { name: 'p.com', aliases: ['www.p.com'], listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } },
], { extra: { functions: { network: { http: { backEnd: { session: { connectTimeout: 2, receiveTimeout: 1 }, health: { failCount: 100 } } } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); });

const get = async (path: string) => {
  const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: 'p.com' } });
  return { status: r.statusCode, body: await r.body.text(), cache: String(r.headers['x-cache']) };
};
const api = async (path: string) => {
  const r = await request(`http://127.0.0.1:${server.apiPort}${path}`);
  return { status: r.statusCode, json: await r.body.json() as Record<string, any> };
};
const fetches = (path: string) => origin.seen.filter((s) => s.url === path);

t.test('purge makes the next access fetch the object again in full', async (t) => {
  await get('/a/1'); t.equal((await get('/a/1')).cache, 'TCP_HIT');
  const r = await api('/command/purge?url=p.com/a/1');
  t.equal(r.status, 200);
  t.match(r.json, { method: 'purge', status: 'OK', result: { Count: 1 } });
  t.ok(r.json.result.Size > 0);
  t.equal((await get('/a/1')).cache, 'TCP_REFRESH_MISS');
  const seen = fetches('/a/1');
  t.equal(seen.length, 2);
  t.equal(seen[1]!.headers['if-none-match'], undefined, 'a purged object is fetched, not revalidated');
});

t.test('an object already purged is not counted again', async (t) => {
  await get('/a/2');
  t.equal((await api('/command/purge?url=p.com/a/2')).json.result.Count, 1);
  t.equal((await api('/command/purge?url=p.com/a/2')).json.result.Count, 0);
});

t.test('expire makes the next access revalidate; a 304 only extends the TTL', async (t) => {
  await get('/e/1');
  t.equal((await api('/command/expire?url=http://www.p.com/e/1')).json.result.Count, 1);
  const r = await get('/e/1');
  t.equal(r.cache, 'TCP_REFRESH_HIT');
  t.equal(r.body, '/e/1 v1');
  t.equal(fetches('/e/1')[1]!.headers['if-none-match'], '"v1"', 'the origin was asked conditionally');
  t.equal((await get('/e/1')).cache, 'TCP_HIT', 'fresh again after the 304');
});

t.test('expireafter sets the expiry to now plus sec, shown in TTL-Left', async (t) => {
  await get('/x/1');
  const before = await api('/monitoring/fileinfo?url=p.com/x/1');
  t.ok(before.json.result[0]['TTL-Left'][1] > 500);
  t.equal((await api('/command/expireafter?sec=30&url=p.com/x/1')).json.result.Count, 1);
  const after = await api('/monitoring/fileinfo?url=p.com/x/1');
  const left = after.json.result[0]['TTL-Left'][1];
  t.ok(left <= 30 && left >= 28, `TTL-Left ${left}`);
  t.equal((await api('/command/expireafter?sec=0&url=p.com/x/1')).status, 400, 'sec 0 is refused');
});

t.test('a wildcard purges the whole subtree, targets joined by | inherit the host', async (t) => {
  for (const p of ['/w/a', '/w/b/c', '/w2/d', '/z']) await get(p);
  const r = await api('/command/purge?url=p.com/w/*|/z');
  t.equal(r.json.result.Count, 3, '/w/a, /w/b/c and /z; not /w2/d');
  t.equal((await get('/w2/d')).cache, 'TCP_HIT');
  t.equal((await get('/w/b/c')).cache, 'TCP_REFRESH_MISS');
});

t.test('a target without any host uses the most recently used host', async (t) => {
  await get('/recent');
  t.equal((await api('/command/purge?url=/recent')).json.result.Count, 1);
});

t.test('hardpurge deletes for good: re-fetched even when the origin then fails, while purge restores', async (t) => {
  await get('/h/1'); await get('/h/2');
  t.equal((await api('/command/purge?url=p.com/h/1')).json.result.Count, 1);
  t.equal((await api('/command/hardpurge?url=p.com/h/2')).json.result.Count, 1);
  originUp = false;
  try {
    const purged = await get('/h/1');
    t.equal(purged.status, 200, 'purged content is restored when the origin fails');
    t.equal(purged.cache, 'TCP_REF_FAIL_HIT');
    const hard = await get('/h/2');
    t.equal(hard.status, 502, 'hard-purged content is gone');
  } finally { originUp = true; }
});

/** Every field of the cache file record of document 1, in its order. */
const RECORD_FIELDS = ['URI', 'Accept-Encoding', 'UseOriginEncoding', 'RefCount', 'Size', 'CachedSize', 'Disk-Index', 'FID',
  'LocalPath', 'HashKey', 'VHost', 'File-Opened', 'File-Updating', 'Downloader-Count', 'LastAccess', 'CreatedTime', 'UpdateTime',
  'TTL-Left', 'LastModifiedTime', 'ExpireTime', 'ResponseCode', 'ContentType', 'CacheControl', 'ETag', 'NoMoreExist',
  'LocalFileExist', 'State', 'SmallFile', 'Remove', 'Deleted', 'AddedSize', 'TransferEncoding', 'Compression', 'Purge',
  'HardPurge', 'Ignore-IMS', 'Fragmented', 'Redirect-Location', 'Content-Disposition', 'NoCache', 'CorrectedInitAge', 'OriginalHeaders'];

t.test('fileinfo shows every field of the record and NOT_CACHED for an unknown URL', async (t) => {
  await get('/f/1');
  const r = await api('/monitoring/fileinfo?url=p.com/f/1');
  t.equal(r.status, 200);
  const rec = r.json.result[0];
  t.same(Object.keys(rec), RECORD_FIELDS, 'exactly the fields of the spec');
  for (const f of ['LastAccess', 'CreatedTime', 'UpdateTime', 'TTL-Left']) t.match(rec[f], [/^\d{4}\.\d\d\.\d\d \d\d:\d\d:\d\d$/, Number], f);
  t.same(rec.LastModifiedTime, [0, 0], 'no Last-Modified from the origin');
  t.equal(rec.URI, '/f/1'); t.equal(rec.ResponseCode, 200); t.equal(rec.CacheControl, 600); t.equal(rec.Purge, 'N');
  await api('/command/purge?url=p.com/f/1');
  t.equal((await api('/monitoring/fileinfo?url=p.com/f/1')).json.result[0].Purge, 'Y');
  t.equal((await api('/command/hardpurge?url=p.com/f/1')).json.result.Count, 1);
  t.match((await api('/monitoring/fileinfo?url=p.com/f/1')).json.result[0], { HardPurge: 'Y', Purge: 'N', LocalFileExist: 'N' }, 'a hard-purged record until the next fetch');
  t.equal((await get('/f/1')).cache, 'TCP_MISS', 'a hard-purged object is a miss');
  // The new copy's row is committed just after the client has its answer: poll, bounded.
  const flag = await pollUntil(async () => (await api('/monitoring/fileinfo?url=p.com/f/1')).json.result[0]?.HardPurge, (f) => f === 'N', { timeoutMs: 2500, intervalMs: 50 });
  t.equal(flag, 'N', 'the fetch replaced it');
  const none = await api('/monitoring/fileinfo?url=p.com/nothing');
  t.equal(none.status, 404);
  t.equal(none.json.status, 'NOT_CACHED');
});

t.test('fileinfo State is Not Init for a hard-purged record until the next fetch fills it, Cached otherwise', async (t) => {
  await get('/st/1');
  t.equal((await api('/monitoring/fileinfo?url=p.com/st/1')).json.result[0].State, 'Cached');
  await api('/command/purge?url=p.com/st/1');
  t.equal((await api('/monitoring/fileinfo?url=p.com/st/1')).json.result[0].State, 'Cached', 'a purged copy is still held (it may be served on a failed refresh)');
  await api('/command/hardpurge?url=p.com/st/1');
  t.equal((await api('/monitoring/fileinfo?url=p.com/st/1')).json.result[0].State, 'Not Init', 'hard-purged: no content until the next fetch');
  await get('/st/1');
  const state = await pollUntil(async () => (await api('/monitoring/fileinfo?url=p.com/st/1')).json.result[0]?.State, (s) => s === 'Cached', { timeoutMs: 2500, intervalMs: 50 });
  t.equal(state, 'Cached', 'the fetch filled it');
});

t.test('fileinfo Ignore-IMS is Y when the refresh of the copy cannot send If-Modified-Since (no Last-Modified), N when it does', async (t) => {
  origin.on('/ims/1', (_req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=600', 'last-modified': 'Tue, 01 Jan 2030 00:00:00 GMT', 'content-length': 2 });
    res.end('lm');
  });
  await get('/ims/0'); await get('/ims/1');
  t.equal((await api('/monitoring/fileinfo?url=p.com/ims/0')).json.result[0]['Ignore-IMS'], 'Y', 'no Last-Modified stored');
  t.equal((await api('/monitoring/fileinfo?url=p.com/ims/1')).json.result[0]['Ignore-IMS'], 'N', 'Last-Modified stored: sent as If-Modified-Since');
});

t.test('bad calls: no url is 400, an unknown host 502, POST purge takes a form body', async (t) => {
  const noUrl = await api('/command/purge');
  t.equal(noUrl.status, 400, JSON.stringify(noUrl.json));
  t.equal((await api('/command/purge?url=nohost.example/x')).status, 502);
  await get('/post/1');
  const r = await request(`http://127.0.0.1:${server.apiPort}/command/purge`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'url=p.com/post/1' });
  t.equal(r.statusCode, 200);
  t.equal(((await r.body.json()) as any).result.Count, 1);
});

t.test('fileinfo has one record per Accept-Encoding variant', async (t) => {
  origin.on('/v/1', (req, res) => {
    const gzip = /gzip/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? 'gzipped-bytes' : 'plain text';
    res.writeHead(200, { vary: 'accept-encoding', 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body), ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    res.end(body);
  });
  for (const ae of ['gzip', 'identity']) {
    const r = await request(`http://127.0.0.1:${port}/v/1`, { headers: { host: 'p.com', 'accept-encoding': ae } });
    await r.body.text();
  }
  const r = await api('/monitoring/fileinfo?url=p.com/v/1');
  t.equal(r.json.result.length, 2);
  t.same(r.json.result.map((x: Record<string, unknown>) => x.Compression).sort(), ['-', 'gzip']);
  for (const rec of r.json.result) { t.equal(rec['Accept-Encoding'], 'Y'); t.same(Object.keys(rec), RECORD_FIELDS); }
});

t.test('every command result carries Count, Size and Time', async (t) => {
  await get('/t/1');
  for (const c of ['purge', 'expire', 'hardpurge']) {
    const r = await api(`/command/${c}?url=p.com/t/1`);
    t.match(r.json.result, { Count: Number, Size: Number, Time: Number }, c);
    t.ok(r.json.result.Time >= 0);
  }
});

t.test('a purged object whose refresh fails is restored, served until connectTimeout, then the origin is asked again', async (t) => {
  await get('/rf/1');
  await api('/command/purge?url=p.com/rf/1');
  t.equal((await api('/monitoring/fileinfo?url=p.com/rf/1')).json.result[0].Purge, 'Y');
  let asked: number;
  originUp = false;
  try {
    const failed = await get('/rf/1');
    t.equal(failed.cache, 'TCP_REF_FAIL_HIT');
    t.equal(failed.body, '/rf/1 v1');
    asked = fetches('/rf/1').length;
    t.equal((await get('/rf/1')).cache, 'TCP_HIT', 'the restored copy serves within connectTimeout (2 s)');
    t.equal(fetches('/rf/1').length, asked, 'without asking the origin');
  } finally { originUp = true; }
  // Requests are hits on the restored copy until connectTimeout has passed; then one refreshes it.
  const last = await pollUntil(async () => (await get('/rf/1')).cache, () => fetches('/rf/1').length > asked, { timeoutMs: 6000, intervalMs: 100 });
  t.ok(fetches('/rf/1').length > asked, 'the origin is tried again once connectTimeout has passed');
  t.equal(last, 'TCP_REFRESH_HIT', 'and the unchanged object is refreshed');
  t.equal((await api('/monitoring/fileinfo?url=p.com/rf/1')).json.result[0].Purge, 'N');
});
