// Black-box: target forms of the purge family and the purge settings of each host
// (purge.purge2expire, purge.resCodeNoCtrlTarget), through /command and the PURGE method. What
// a command did is read from what the origin sees next: a purge fetches in full, an expire asks
// conditionally (If-None-Match).
import t from 'tap';
import { request } from 'undici';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { call } from '../manager/fixtures/helpers.js';

const origin = await new TestOrigin().start();
origin.otherwise((req, res) => {
  if (req.headers['if-none-match'] === '"v1"') { res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=600' }); res.end(); return; }
  const body = `${req.headers.host} ${req.url}`;
  res.writeHead(200, { etag: '"v1"', 'cache-control': 'max-age=600', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const host = (name: string, purge: Record<string, unknown> = {}) => ({
  name, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  functions: { network: { cache: { enablePurgeMethod: true, purge } } },
});
const server = await startServer([
  host('none.com', { resCodeNoCtrlTarget: 404 }), host('root.com', { purge2expire: 'ROOT' }), host('pat.com', { purge2expire: 'PATTERN' }),
  host('all.com', { purge2expire: 'ALL' }), host('bench'),
]);
t.teardown(async () => { await server.stop(); await origin.stop(); });

const get = async (h: string, path: string) => {
  const r = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: h } });
  await r.body.text();
  return String(r.headers['x-cache']);
};
const api = async (path: string) => {
  const r = await request(`http://127.0.0.1:${server.apiPort}${path}`);
  return { status: r.statusCode, json: await r.body.json() as Record<string, any> };
};
const purgeMethod = (h: string, path: string, headers: Record<string, string> = {}) =>
  call(port, path, { method: 'PURGE', headers: { host: h, ...headers } }) as Promise<{ status: number; json: Record<string, any> }>;

/** What the origin saw for the path of that host (Host carries the origin port too). */
const asked = (h: string, path: string) => origin.seen.filter((s) => s.url === path && String(s.headers.host).split(':')[0] === h);

/** How the origin was asked the last time for the path of that host: 'full' or 'conditional'. */
const lastAsk = (h: string, path: string): string => {
  const seen = asked(h, path);
  const last = seen[seen.length - 1];
  return last === undefined ? 'never' : last.headers['if-none-match'] === undefined ? 'full' : 'conditional';
};

/** Caches the paths, runs the command, requests each path again and reports how the origin was asked. */
async function effect(h: string, paths: string[], run: () => Promise<unknown>): Promise<string[]> {
  for (const p of paths) await get(h, p);
  await run();
  const counts = paths.map((p) => asked(h, p).length);
  for (const p of paths) await get(h, p);
  return paths.map((p, i) => (asked(h, p).length === counts[i] ? 'untouched' : lastAsk(h, p)));
}

t.test('purge2expire NONE: every purge stays a purge', async (t) => {
  t.same(await effect('none.com', ['/', '/a/1', '/a/2.jpg'], () => api('/command/purge?url=none.com/|/a/*')), ['full', 'full', 'full']);
});

t.test('purge2expire ROOT: only a purge of the whole site (host/ or host/*) becomes expire', async (t) => {
  t.same(await effect('root.com', ['/'], () => api('/command/purge?url=root.com/')), ['conditional'], 'host/');
  t.same(await effect('root.com', ['/r/1'], () => api('/command/purge?url=root.com/*')), ['conditional'], 'host/*');
  t.same(await effect('root.com', ['/r/2.jpg', '/r/3.png'], () => api('/command/purge?url=root.com/*.jpg')), ['full', 'untouched'], 'a pattern at the root stays a purge');
  t.same(await effect('root.com', ['/r/4'], () => api('/command/purge?url=root.com/r/4')), ['full'], 'one URL stays a purge');
});

t.test('purge2expire PATTERN: wildcard purges become expire, exact ones stay purges', async (t) => {
  t.same(await effect('pat.com', ['/d/1', '/d/sub/2'], () => api('/command/purge?url=pat.com/d/*')), ['conditional', 'conditional']);
  t.same(await effect('pat.com', ['/e/1'], () => api('/command/purge?url=pat.com/e/1')), ['full']);
});

t.test('purge2expire ALL: every purge becomes expire, also through the PURGE method', async (t) => {
  t.same(await effect('all.com', ['/x'], () => api('/command/purge?url=all.com/x')), ['conditional']);
  t.same(await effect('all.com', ['/y'], async () => {
    const r = await purgeMethod('all.com', '/y');
    t.equal(r.json.method, 'purge', 'the reply names the operation asked, as /command/purge does');
  }), ['conditional']);
});

t.test('purge2expire applies to the PURGE method like to /command/purge', async (t) => {
  t.same(await effect('pat.com', ['/m/1'], () => purgeMethod('pat.com', '/m/*')), ['conditional']);
  t.same(await effect('root.com', ['/m/2'], () => purgeMethod('root.com', '/m/2')), ['full']);
});

t.test('PURGE with X-Invalidate: expire makes the next access revalidate', async (t) => {
  t.same(await effect('none.com', ['/xi/1'], async () => {
    const r = await purgeMethod('none.com', '/xi/1', { 'x-invalidate': 'expire' });
    t.match(r.json, { version: '0.1.0', method: 'expire', status: 'OK', result: { Count: 1 } });
  }), ['conditional']);
});

t.test('resCodeNoCtrlTarget is the HTTP code when nothing matched, for any target host', async (t) => {
  const none = await api('/command/purge?url=none.com/never-cached');
  t.equal(none.status, 404);
  t.match(none.json, { status: 'OK', result: { Count: 0 } });
  t.equal((await api('/command/purge?url=root.com/never-cached')).status, 200, 'a host without the setting answers 200');
  t.equal((await api('/command/purge?url=root.com/never|none.com/never')).status, 404, 'the code of a later target host counts too');
  t.equal((await purgeMethod('none.com', '/never-cached')).status, 404, 'and for the PURGE method');
  await get('none.com', '/hit');
  t.equal((await api('/command/expire?url=none.com/hit')).status, 200, 'something matched: 200');
});

t.test('a directory target is that one URL; an inner * matches across directories under its prefix', async (t) => {
  t.same(await effect('none.com', ['/dir/', '/dir/a', '/dir/sub/b'], () => api('/command/purge?url=none.com/dir/')), ['full', 'untouched', 'untouched']);
  const r = await effect('none.com', ['/img/a.jpg', '/img/s/b.jpg', '/img/c.png', '/other/d.jpg'], async () => {
    const res = await api('/command/purge?url=none.com/img/*.jpg');
    t.equal(res.json.result.Count, 2);
  });
  t.same(r, ['full', 'full', 'untouched', 'untouched']);
});

t.test('a virtual host named without a dot is recognised as the host of host/path', async (t) => {
  for (const p of ['/obj/1', '/obj/2', '/else']) await get('bench', p);
  const r = await api('/command/purge?url=bench/obj/*');
  t.equal(r.status, 200);
  t.equal(r.json.result.Count, 2);
  t.equal(await get('bench', '/else'), 'TCP_HIT');
  t.equal(await get('bench', '/obj/1'), 'TCP_REFRESH_MISS');
});
