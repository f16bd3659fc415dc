// Cache-Status (RFC 9211) as a client sees it: curl against the real server and a scripted origin,
// one server for the file with three hosts (the defaults, a host with its own name and key=, a
// host with the field off).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ServerResponse } from 'node:http';
import t from 'tap';
import { request } from 'undici';
import { TestOrigin, type SeenRequest } from '../../helpers/origin.js';
import { freePort } from '../../helpers/ports.js';
import { startServer } from '../../helpers/server.js';
import { waitFor } from '../../helpers/wait.js';

const origin = await new TestOrigin().start();
const port = await freePort();
const at = { listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } };
const server = await startServer([
  {
    name: 'cs.test', ...at,
    functions: {
      network: {
        http: { frontEnd: { bypass: { matchingList: [{ pattern: '$URLMATCH[^cs\\.test/bypass/]' }] } } },
        // Pieces of 64 KiB: a range test needs no large object.
        cache: { limitMaxRange: 131072, partSize: 65536 },
      },
    },
  },
  { name: 'named.test', ...at, functions: { network: { cache: { cacheStatus: { name: 'Edge "A"', key: true } } } } },
  { name: 'off.test', ...at, functions: { network: { cache: { cacheStatus: { enable: false } } } } },
], { extra: { functions: { network: { http: { frontEnd: { http2: { cleartext: true } } } } } } });
t.teardown(async () => {
  await server.stop();
  await origin.stop();
});

interface Seen { status: number; headers: Record<string, string>; body: string }

/** curl with the response head and body (no interim answers here), fields by lower-case name. */
async function curl(host: string, path: string, args: string[] = []): Promise<Seen> {
  const { stdout } = await promisify(execFile)('curl', ['-s', '-i', '-H', `Host: ${host}`, ...args, `http://127.0.0.1:${port}${path}`]);
  const split = stdout.indexOf('\r\n\r\n');
  const head = stdout.slice(0, split === -1 ? stdout.length : split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(head[0]!.split(' ')[1]), headers, body: split === -1 ? '' : stdout.slice(split + 4) };
}

const reply = (status: number, headers: Record<string, string>, body: string) => (_q: SeenRequest, res: ServerResponse): void => {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
};

/** The ttl parameter of the last member. */
const ttlOf = (field: string | undefined): number => Number(/; ttl=(-?\d+)[^,]*$/.exec(field ?? '')?.[1]);

t.test('a miss says uri-miss, the origin status and stored; the next request is a hit with the remaining ttl', async (t) => {
  origin.on('/hit', reply(200, { 'cache-control': 'max-age=60' }, 'hit body'));
  const miss = await curl('cs.test', '/hit');
  t.equal(miss.headers['cache-status'], 'svc; fwd=uri-miss; fwd-status=200; ttl=60; stored');
  const hit = await curl('cs.test', '/hit');
  t.equal(hit.body, 'hit body');
  t.match(hit.headers['cache-status'], /^svc; hit; ttl=\d+$/);
  const ttl = ttlOf(hit.headers['cache-status']);
  t.ok(ttl <= 60 && ttl >= 50, `ttl ${ttl} is what remains of 60 s`);
  t.equal(ttl + Number(hit.headers.age), 60, 'ttl and Age add up to the lifetime');
});

t.test('an answer the cache may not store says so by leaving out stored', async (t) => {
  origin.on('/nostore', reply(200, { 'cache-control': 'no-store' }, 'private'));
  const a = await curl('cs.test', '/nostore');
  t.equal(a.headers['cache-status'], 'svc; fwd=uri-miss; fwd-status=200');
});

t.test('a stale copy revalidated by a 304 says fwd=stale, fwd-status=304 and the new ttl', async (t) => {
  origin.on('/stale', (q, res) => {
    if (q.headers['if-none-match'] === '"s1"') { res.writeHead(304, { etag: '"s1"', 'cache-control': 'max-age=30' }); res.end(); return; }
    reply(200, { etag: '"s1"', 'cache-control': 'max-age=0' }, 'stale body')(q, res);
  });
  const first = await curl('cs.test', '/stale');
  t.match(first.headers['cache-status'], /^svc; fwd=uri-miss; fwd-status=200; ttl=(0|-1); stored$/);
  const second = await curl('cs.test', '/stale');
  t.equal(second.body, 'stale body');
  t.equal(second.headers['x-cache'], 'TCP_REFRESH_HIT');
  t.match(second.headers['cache-status'], /^svc; fwd=stale; fwd-status=304; ttl=(30|29)$/);
});

t.test('another variant of a stored URL says vary-miss', async (t) => {
  origin.on('/vary', (q, res) => reply(200, { 'cache-control': 'max-age=60', vary: 'Accept-Language' }, `lang ${q.headers['accept-language']}`)(q, res));
  const en = await curl('cs.test', '/vary', ['-H', 'Accept-Language: en']);
  t.match(en.headers['cache-status'], /fwd=uri-miss/);
  const fr = await curl('cs.test', '/vary', ['-H', 'Accept-Language: fr']);
  t.equal(fr.body, 'lang fr');
  t.match(fr.headers['cache-status'], /^svc; fwd=vary-miss; fwd-status=200; ttl=\d+; stored$/);
  const enAgain = await curl('cs.test', '/vary', ['-H', 'Accept-Language: en']);
  t.match(enAgain.headers['cache-status'], /^svc; hit; ttl=/);
});

t.test('a POST says fwd=method with the origin status', async (t) => {
  origin.on('/form', reply(201, {}, 'created'));
  const a = await curl('cs.test', '/form', ['-X', 'POST', '--data', 'x=1']);
  t.equal(a.status, 201);
  t.equal(a.headers['cache-status'], 'svc; fwd=method; fwd-status=201');
});

t.test('a request a bypass rule matches says fwd=bypass', async (t) => {
  origin.on('/bypass/live', reply(200, { 'cache-control': 'max-age=60' }, 'live'));
  const a = await curl('cs.test', '/bypass/live');
  t.equal(a.headers['cache-status'], 'svc; fwd=bypass; fwd-status=200');
});

t.test('a client max-age=0 on a fresh copy says fwd=request', async (t) => {
  origin.on('/ask', reply(200, { 'cache-control': 'max-age=60' }, 'ask'));
  await curl('cs.test', '/ask');
  const a = await curl('cs.test', '/ask', ['-H', 'Cache-Control: max-age=0']);
  t.match(a.headers['cache-status'], /^svc; fwd=request; fwd-status=200; ttl=\d+; stored$/);
});

t.test('a miss that joins a fetch in flight says collapsed', async (t) => {
  let release: (() => void) | undefined;
  origin.on('/slow', (_q, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=60', 'content-length': '8' });
    res.write('slow');
    release = () => res.end('body');
  });
  const first = curl('cs.test', '/slow');
  t.ok(await waitFor(() => release !== undefined), 'the origin answered the first request and holds the rest of the body');
  // The second client gets its head while the origin still holds the body: it joined the fetch.
  const second = await request(`http://127.0.0.1:${port}/slow`, { headers: { host: 'cs.test' } });
  t.match(second.headers['cache-status'], /^svc; fwd=uri-miss; fwd-status=200; ttl=\d+; stored; collapsed$/);
  release!();
  t.equal(await second.body.text(), 'slowbody');
  const a = await first;
  t.match(a.headers['cache-status'], /^svc; fwd=uri-miss; fwd-status=200; ttl=\d+; stored$/, 'the request that went forward was not collapsed');
  t.equal(origin.count('/slow'), 1);
});

t.test('an origin-side Cache-Status is kept and this cache\'s member appended after it, on the miss and on hits', async (t) => {
  origin.on('/chain', reply(200, { 'cache-control': 'max-age=60', 'cache-status': 'OriginCache; hit; ttl=100' }, 'chain'));
  const miss = await curl('cs.test', '/chain');
  t.match(miss.headers['cache-status'], /^OriginCache; hit; ttl=100, svc; fwd=uri-miss; fwd-status=200; ttl=\d+; stored$/);
  const hit = await curl('cs.test', '/chain');
  t.match(hit.headers['cache-status'], /^OriginCache; hit; ttl=100, svc; hit; ttl=\d+$/);
});

t.test('hits on copies of different lifetimes and origin members, interleaved, each say their own ttl and members', async (t) => {
  const copies = [
    { path: '/mixed/a', age: 100, own: undefined },
    { path: '/mixed/b', age: 2000, own: undefined },
    { path: '/mixed/c', age: 100, own: 'Up; hit' },
    { path: '/mixed/d', age: 100, own: 'Other; fwd=miss' },
  ];
  for (const c of copies) {
    origin.on(c.path, reply(200, { 'cache-control': `max-age=${c.age}`, ...(c.own === undefined ? {} : { 'cache-status': c.own }) }, c.path));
    await curl('cs.test', c.path);
  }
  for (let round = 0; round < 2; round++) {
    for (const c of copies) {
      const hit = await curl('cs.test', c.path);
      const field = hit.headers['cache-status'];
      t.match(field, new RegExp(`^${c.own === undefined ? '' : `${c.own}, `}svc; hit; ttl=\\d+$`), `${c.path}: its own members, then ours`);
      const ttl = ttlOf(field);
      t.ok(ttl > c.age - 10 && ttl <= c.age, `${c.path}: the ttl of its own lifetime (${ttl})`);
    }
  }
});

t.test('a host names its own member (a quoted string when no token) and can ask for the cache key', async (t) => {
  origin.on('/named', reply(200, { 'cache-control': 'max-age=60' }, 'named'));
  const miss = await curl('named.test', '/named?b=2');
  t.match(miss.headers['cache-status'], /^"Edge \\"A\\""; fwd=uri-miss; fwd-status=200; ttl=\d+; stored; key="named\.test\/named\?b=2"$/);
  const hit = await curl('named.test', '/named?b=2');
  t.match(hit.headers['cache-status'], /^"Edge \\"A\\""; hit; ttl=\d+; key="named\.test\/named\?b=2"$/);
});

t.test('a host with cacheStatus.enable false adds no member, and passes the origin\'s on', async (t) => {
  origin.on('/off', reply(200, { 'cache-control': 'max-age=60' }, 'off'));
  t.equal((await curl('off.test', '/off')).headers['cache-status'], undefined);
  t.equal((await curl('off.test', '/off')).headers['cache-status'], undefined, 'nor on a hit');
  origin.on('/off-chain', reply(200, { 'cache-control': 'max-age=60', 'cache-status': 'OriginCache; fwd=uri-miss' }, 'off'));
  t.equal((await curl('off.test', '/off-chain')).headers['cache-status'], 'OriginCache; fwd=uri-miss');
  t.equal((await curl('off.test', '/off-chain')).headers['cache-status'], 'OriginCache; fwd=uri-miss');
});

t.test('an answer the server makes itself (origin unreachable) still carries the member', async (t) => {
  origin.on('/gone', (_q, res) => res.destroy());
  const a = await curl('cs.test', '/gone');
  t.equal(a.status, 502);
  t.equal(a.headers['cache-status'], 'svc; fwd=uri-miss');
});

t.test('HTTP/2 answers carry the member too, a hit\'s included, and none where it is off', async (t) => {
  origin.on('/h2', reply(200, { 'cache-control': 'max-age=60' }, 'h2'));
  const h2 = ['--http2-prior-knowledge'];
  t.match((await curl('cs.test', '/h2', h2)).headers['cache-status'], /^svc; fwd=uri-miss; fwd-status=200; ttl=\d+; stored$/);
  t.match((await curl('cs.test', '/h2', h2)).headers['cache-status'], /^svc; hit; ttl=\d+$/);
  await curl('off.test', '/h2', h2);
  const off = await curl('off.test', '/h2', h2);
  t.equal(off.status, 200);
  t.equal(off.headers['x-cache'], 'TCP_HIT');
  t.equal(off.headers['cache-status'], undefined);
});

t.test('a range the stored pieces do not hold says fwd=partial; one they hold is a hit', async (t) => {
  const body = Buffer.alloc(200_000, 'p');
  origin.on('/ranged', (q, res) => {
    const m = /^bytes=(\d+)-(\d+)$/.exec(String(q.headers.range));
    const fields = { etag: '"r1"', 'cache-control': 'max-age=60', 'accept-ranges': 'bytes' };
    if (m === null) { res.writeHead(200, { ...fields, 'content-length': body.length }); res.end(body); return; }
    const start = Number(m[1]);
    const end = Math.min(Number(m[2]), body.length - 1);
    res.writeHead(206, { ...fields, 'content-range': `bytes ${start}-${end}/${body.length}`, 'content-length': end - start + 1 });
    res.end(body.subarray(start, end + 1));
  });
  const first = await curl('cs.test', '/ranged', ['-r', '0-9']);
  t.equal(first.status, 206);
  t.match(first.headers['cache-status'], /^svc; fwd=uri-miss; fwd-status=206/);
  const later = await curl('cs.test', '/ranged', ['-r', '70000-70009']);
  t.equal(later.status, 206);
  t.match(later.headers['cache-status'], /^svc; fwd=partial; fwd-status=206/);
  const covered = await curl('cs.test', '/ranged', ['-r', '10-19']);
  t.match(covered.headers['cache-status'], /^svc; hit; ttl=\d+$/);
});
