// Black-box: cache tags. A real origin tags its answers in Surrogate-Key and Cache-Tag, the real
// server stores them, curl is the client and the operator; a purge by tag is proven by what the
// origin is asked next and by the answers' X-Cache.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil } from '../helpers/wait.js';

const run = promisify(execFile);
const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  // /<group>/<name>: tagged with its group (Surrogate-Key) and `page-<name>` plus `all` (Cache-Tag).
  const [, group, name] = (req.url ?? '/').split('/');
  const body = `${req.url} body`;
  if (req.headers['if-none-match'] === '"1"') { res.writeHead(304, { etag: '"1"', 'cache-control': 'max-age=600' }); res.end(); return; }
  res.writeHead(200, {
    etag: '"1"',
    'cache-control': 'max-age=600', 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body),
    'surrogate-key': `${group} shared`, 'cache-tag': `page-${name},all`,
  });
  res.end(body);
});
const port = await freePort();
const shown = await freePort();
const server = await startServer([
  { name: 'tag.test', listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] }, functions: { network: { cache: { enablePurgeMethod: true } } } },
  { name: 'shown.test', listen: `127.0.0.1:${shown}`, origin: { address: [`127.0.0.1:${origin.port}`] }, functions: { network: { cache: { tags: { strip: false } } } } },
]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

/** curl as the client: status, the header block in lower case, the body. */
async function curl(args: string[]): Promise<{ status: number; head: string; body: string }> {
  const { stdout } = await run('curl', ['-s', '-D', '-', ...args]);
  const cut = stdout.indexOf('\r\n\r\n');
  const head = stdout.slice(0, cut).toLowerCase();
  return { status: Number(head.split(' ')[1]), head, body: stdout.slice(cut + 4) };
}
const get = async (path: string, toPort = port, host = 'tag.test') => {
  const r = await curl(['-H', `Host: ${host}`, `http://127.0.0.1:${toPort}${path}`]);
  return { ...r, cache: /^x-cache: (\S+)/m.exec(r.head)?.[1]?.toUpperCase() };
};
const api = async (path: string) => {
  const r = await curl([`http://127.0.0.1:${server.apiPort}${path}`]);
  return { status: r.status, json: JSON.parse(r.body) as Record<string, any> };
};
const fetches = (path: string) => origin.seen.filter((s) => s.url === path).length;

t.test('the tag fields are stripped from the answers to clients, hits included, unless the host keeps them', async (t) => {
  const miss = await get('/s/1');
  const hit = await get('/s/1');
  t.equal(hit.cache, 'TCP_HIT');
  for (const r of [miss, hit]) {
    t.notMatch(r.head, /surrogate-key|cache-tag/, 'no tag field reaches the client');
    t.match(r.head, /content-type: text\/plain/);
  }
  const kept = await get('/s/1', shown, 'shown.test');
  t.match(kept.head, /surrogate-key: s shared/);
  t.match(kept.head, /cache-tag: page-1,all/);
});

t.test('a purge by tag through the API counts objects and bytes and re-fetches only the tagged ones', async (t) => {
  for (const p of ['/g1/a', '/g1/b', '/g2/c']) await get(p);
  const r = await api('/command/purge?tag=g1');
  t.equal(r.status, 200);
  t.match(r.json, { method: 'purge', status: 'OK', result: { Count: 2 } });
  t.equal(r.json.result.Size, Buffer.byteLength('/g1/a body') + Buffer.byteLength('/g1/b body'));
  t.equal((await get('/g1/a')).cache, 'TCP_REFRESH_MISS');
  t.equal(fetches('/g1/a'), 2, 'the origin was asked again');
  t.equal((await get('/g2/c')).cache, 'TCP_HIT', 'an object without the tag is left alone');
});

t.test('tag is repeatable, a Cache-Tag tag works as a Surrogate-Key one, and vhost scopes the purge to one host', async (t) => {
  await get('/h1/x'); await get('/h2/y'); await get('/h1/x', shown, 'shown.test');
  const r = await api('/command/purge?tag=h1&tag=page-y&vhost=tag.test');
  t.equal(r.json.result.Count, 2);
  t.equal((await get('/h1/x', shown, 'shown.test')).cache, 'TCP_HIT', 'the other host kept its copy of the same tag');
  t.equal((await get('/h2/y')).cache, 'TCP_REFRESH_MISS');
});

t.test('expire, hardpurge and the asynchronous purge take tag too', async (t) => {
  await get('/e/1'); await get('/d/1'); await get('/q/1');
  t.equal((await api('/command/expire?tag=e')).json.result.Count, 1);
  t.equal((await get('/e/1')).cache, 'TCP_REFRESH_HIT', 'expired: revalidated');
  t.equal((await api('/command/hardpurge?tag=d')).json.result.Count, 1);
  t.equal((await get('/d/1')).cache, 'TCP_MISS', 'hard-purged: gone');
  const queued = await api('/command/async/purge?tag=q');
  t.match(queued.json, { status: 'OK', result: { queued: true } });
  t.equal((await get('/q/1')).cache, 'TCP_REFRESH_MISS', 'while queued, pre-cache control treats it as purged');
  await pollUntil(() => api('/monitoring/asynctrl/actives'), (r) => r.json.result.queue.used === 0);
});

t.test('PURGE with a Cache-Tag or Surrogate-Key field purges those tags on its host', async (t) => {
  await get('/m1/a'); await get('/m2/b');
  const r = await curl(['-X', 'PURGE', '-H', 'Host: tag.test', '-H', 'Cache-Tag: m1', '-H', 'Surrogate-Key: page-b', `http://127.0.0.1:${port}/anything`]);
  t.equal(r.status, 200);
  t.match(JSON.parse(r.body), { method: 'purge', status: 'OK', result: { Count: 2 } });
  t.equal((await get('/m1/a')).cache, 'TCP_REFRESH_MISS');
  t.equal((await get('/m2/b')).cache, 'TCP_REFRESH_MISS');
});

t.test('an empty tag, an over-long tag, too many tags and a vhost without tag are refused, nothing purged', async (t) => {
  await get('/b/1');
  const bad = async (query: string, reason: string) => {
    const r = await api(`/command/purge?${query}`);
    t.equal(r.status, 400, query.slice(0, 40));
    t.match(r.json.reason, reason);
  };
  await bad('tag=', 'tag is empty');
  await bad(`tag=${'x'.repeat(1025)}`, 'tag longer than 1024 bytes');
  await bad(Array.from({ length: 101 }, (_, i) => `tag=t${i}`).join('&'), 'more than 100 in one call');
  await bad('vhost=tag.test', 'vhost scopes tag');
  t.equal((await api('/command/purge?tag=b&vhost=nowhere.test')).status, 502, 'an unknown vhost is as an unknown host in url');
  const r = await curl(['-X', 'PURGE', '-H', 'Host: tag.test', '-H', 'Cache-Tag;', `http://127.0.0.1:${port}/b/1`]);
  t.equal(r.status, 400);
  t.match(JSON.parse(r.body).reason, 'tag is empty');
  t.equal((await get('/b/1')).cache, 'TCP_HIT', 'nothing was purged');
});
