// Black-box: compression at the edge (issue 28) with the real server, a real origin and curl.
// Each coding of an object is made from the cached copy (the origin is asked once per object),
// stored and served from the cache; negotiation, Vary, entity tags, HEAD, 304 and Range agree
// with one another; the origin's own coding and no-transform are respected; a purge takes every
// copy; the access log shows what was sent.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync, gzipSync, zstdDecompressSync } from 'node:zlib';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { startServer } from '../helpers/server.js';
import { pollUntil, until } from '../helpers/wait.js';

const run = promisify(execFile);
const TEXT = Array.from({ length: 600 }, (_, i) => `line ${i} of a compressible text object\n`).join('');
// Slow to compress at brotli quality 11 (varied lines, half a megabyte).
const BIG = Array.from({ length: 12000 }, (_, i) => `${i} ${(i * 7919) % 10007} ${(i * 104729) % 65537} row\n`).join('');
let version = 1;
const origin = await new TestOrigin().start();
// An origin that gzips for clients that accept it, as many do.
origin.on('/negotiating', (req, res) => {
  const gzip = /gzip/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? gzipSync(TEXT) : Buffer.from(TEXT);
  res.writeHead(200, {
    'content-type': 'text/plain', 'cache-control': 'max-age=600', vary: 'Accept-Encoding', 'content-length': body.length,
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(body);
});
origin.otherwise((req, res) => {
  const [p, kind] = [req.url.split('?')[0]!, req.url.split('?')[1] ?? ''];
  const body = p === '/changing' ? `${TEXT}v${version}` : p.startsWith('/big') ? BIG : TEXT;
  const headers: Record<string, string | number> = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'max-age=600', etag: `"${p.slice(1)}"` };
  if (kind === 'png') headers['content-type'] = 'image/png';
  if (kind === 'notransform') headers['cache-control'] = 'max-age=600, no-transform';
  if (kind === 'small') { res.writeHead(200, { ...headers, 'content-length': 5 }); res.end('small'); return; }
  if (kind === 'gzipped') {
    const z = gzipSync(body);
    res.writeHead(200, { ...headers, 'content-encoding': 'gzip', 'content-length': z.length });
    res.end(z);
    return;
  }
  res.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
const port = await freePort();
const host = (name: string, compression: Record<string, unknown> = {}) => ({
  name, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] },
  functions: { compression, operations: { log: { access: { loopback: true, form: 'svc' } } } },
});
const server = await startServer([
  host('c.test'), host('off.test', { enable: false }), host('nowait.test', { queue: { maxWait: 0 } }),
  host('tight.test', { level: { br: 11 }, queue: { concurrency: 1, maxQueued: 0, maxWait: 60000 } }),
  { ...host('own.test'), functions: { network: { cache: { compression: { useOriginEncoding: false } } } } },
], { extra: { functions: { operations: { log: { meta: { dir: 'logs' } } }, network: { http: { frontEnd: { http2: { cleartext: true } } } } } } });
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(server.dir, { recursive: true, force: true }); });

interface Answer { status: number; headers: Record<string, string>; body: Buffer }
let n = 0;
/** curl, the head read from -D, the body as it came (undecoded unless --compressed is given). */
async function curl(vhost: string, target: string, ...args: string[]): Promise<Answer> {
  const file = path.join(server.dir, `body-${n++}`);
  const { stdout } = await run('curl', ['-s', '-D', '-', '-o', file, '-H', `Host: ${vhost}`, ...args, `http://127.0.0.1:${port}${target}`]);
  const blocks = stdout.split('\r\n\r\n').filter((b) => b.startsWith('HTTP/'));
  const lines = blocks[blocks.length - 1]!.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) { const c = l.indexOf(':'); if (c > 0) headers[l.slice(0, c).toLowerCase()] = l.slice(c + 1).trim(); }
  const body = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
  return { status: Number(lines[0]!.split(' ')[1]), headers, body };
}
const ae = (v: string): string[] => ['-H', `Accept-Encoding: ${v}`];

t.test('each coding is made from the cached copy: the origin is fetched once for identity, br, zstd and gzip clients', async (t) => {
  const miss = await curl('c.test', '/one', ...ae('br'));
  t.equal(miss.headers['x-cache'], 'TCP_MISS');
  t.equal(miss.headers['content-encoding'], undefined, 'the fetching answer goes out as it arrives');
  t.equal(miss.headers.vary, 'Accept-Encoding', 'but says it varies');
  const br = await curl('c.test', '/one', ...ae('br'));
  t.equal(br.headers['x-cache'], 'TCP_HIT');
  t.equal(br.headers['content-encoding'], 'br');
  t.equal(br.headers.vary, 'Accept-Encoding');
  t.equal(br.headers.etag, '"one-br"');
  t.equal(Number(br.headers['content-length']), br.body.length);
  t.ok(br.body.length < TEXT.length / 4, `compressed to ${br.body.length} of ${TEXT.length} bytes`);
  t.equal(brotliDecompressSync(br.body).toString(), TEXT);
  const zstd = await curl('c.test', '/one', ...ae('zstd'));
  t.equal(zstd.headers['content-encoding'], 'zstd');
  t.equal(zstd.headers.etag, '"one-zstd"');
  t.equal(zstdDecompressSync(zstd.body).toString(), TEXT);
  const gzip = await curl('c.test', '/one', ...ae('gzip, deflate'));
  t.equal(gzip.headers['content-encoding'], 'gzip');
  t.equal(gunzipSync(gzip.body).toString(), TEXT);
  const plain = await curl('c.test', '/one');
  t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: identity');
  t.equal(plain.headers.vary, 'Accept-Encoding');
  t.equal(plain.headers.etag, '"one"');
  t.equal(plain.body.toString(), TEXT);
  const decoded = await curl('c.test', '/one', '--compressed');
  t.equal(decoded.headers['content-encoding'], 'br', 'curl --compressed offers deflate, gzip, br, zstd alike: br is preferred');
  t.equal(decoded.body.toString(), TEXT, 'curl decodes it');
  const again = await curl('c.test', '/one', ...ae('br'));
  t.strictSame(again.body, br.body, 'the stored br copy is served again');
  t.equal(origin.count('/one'), 1, 'one origin fetch for every coding');
});

t.test('an HTTP/2 client gets the coded copy with the fields an HTTP/1.1 client gets', async (t) => {
  const h2 = '--http2-prior-knowledge';
  const miss = await curl('c.test', '/h2-coded', h2, ...ae('gzip'));
  t.equal(miss.status, 200);
  t.equal(miss.headers['content-encoding'], undefined, 'the fetching answer goes out as it arrives');
  const gzip = await curl('c.test', '/h2-coded', h2, ...ae('gzip'));
  t.equal(gzip.headers['x-cache'], 'TCP_HIT');
  t.equal(gzip.headers['content-encoding'], 'gzip');
  t.equal(gzip.headers.vary, 'Accept-Encoding');
  t.equal(gzip.headers.etag, '"h2-coded-gzip"');
  t.equal(Number(gzip.headers['content-length']), gzip.body.length);
  t.equal(gunzipSync(gzip.body).toString(), TEXT);
  const h1 = await curl('c.test', '/h2-coded', ...ae('gzip'));
  t.strictSame(gzip.body, h1.body, 'the same stored copy over HTTP/1.1');
});

t.test('q-values choose the coding; q=0 refuses one; identity weighed higher wins', async (t) => {
  await curl('c.test', '/two');
  t.equal((await curl('c.test', '/two', ...ae('br;q=0.5, gzip;q=0.9'))).headers['content-encoding'], 'gzip');
  t.equal((await curl('c.test', '/two', ...ae('br;q=0, *'))).headers['content-encoding'], 'zstd');
  t.equal((await curl('c.test', '/two', ...ae('gzip;q=0.2, identity'))).headers['content-encoding'], undefined);
  t.equal(origin.count('/two'), 1);
});

t.test('HEAD, 304 and Range agree with GET', async (t) => {
  await curl('c.test', '/three');
  const get = await curl('c.test', '/three', ...ae('br'));
  const head = await curl('c.test', '/three', '-I', ...ae('br'));
  t.equal(head.status, 200);
  t.equal(head.headers['content-encoding'], 'br');
  t.equal(head.headers['content-length'], get.headers['content-length']);
  t.equal(head.headers.etag, get.headers.etag);
  const notModified = await curl('c.test', '/three', ...ae('br'), '-H', 'If-None-Match: "three-br"');
  t.equal(notModified.status, 304);
  t.equal(notModified.headers.etag, '"three-br"');
  t.equal(notModified.headers.vary, 'Accept-Encoding');
  const otherTag = await curl('c.test', '/three', ...ae('br'), '-H', 'If-None-Match: "three"');
  t.equal(otherTag.status, 200, 'the identity tag does not validate the br copy');
  const identity304 = await curl('c.test', '/three', '-H', 'If-None-Match: "three"');
  t.equal(identity304.status, 304);
  const range = await curl('c.test', '/three', ...ae('br'), '-H', 'Range: bytes=5-14');
  t.equal(range.status, 206);
  t.equal(range.headers['content-encoding'], undefined, 'ranges are of the identity bytes');
  t.equal(range.headers['content-range'], `bytes 5-14/${TEXT.length}`);
  t.equal(range.body.toString(), TEXT.slice(5, 15));
  t.equal(range.headers.vary, 'Accept-Encoding');
});

t.test('no compression for an origin-encoded answer, no-transform, small bodies, other types, or a host with enable false', async (t) => {
  const gz = await curl('c.test', '/four?gzipped');
  const gzHit = await curl('c.test', '/four?gzipped', ...ae('br, gzip'));
  t.equal(gzHit.headers['content-encoding'], 'gzip', 'the origin coding is passed as it is');
  t.strictSame(gzHit.body, gz.body);
  t.equal(gunzipSync(gzHit.body).toString(), TEXT, 'not compressed twice');
  for (const kind of ['notransform', 'small', 'png']) {
    await curl('c.test', `/four?${kind}`);
    const hit = await curl('c.test', `/four?${kind}`, ...ae('br'));
    t.equal(hit.headers['x-cache'], 'TCP_HIT', kind);
    t.equal(hit.headers['content-encoding'], undefined, kind);
    t.equal(hit.headers.vary, undefined, `${kind}: nothing varies`);
  }
  await curl('off.test', '/four');
  const off = await curl('off.test', '/four', ...ae('br'));
  t.equal(off.headers['x-cache'], 'TCP_HIT');
  t.equal(off.headers['content-encoding'], undefined);
  t.equal(off.headers.vary, undefined);
});

t.test('a purge takes every coding: the next answers are made from the new content', async (t) => {
  await curl('c.test', '/changing');
  for (const c of ['br', 'gzip', 'zstd']) t.equal((await curl('c.test', '/changing', ...ae(c))).headers['content-encoding'], c);
  const api = `http://127.0.0.1:${server.apiPort}`;
  const records = async (): Promise<{ Compression: string; Deleted: string; Size: number }[]> => {
    const r = await fetch(`${api}/monitoring/fileinfo?url=c.test/changing`);
    return ((await r.json()) as { result: { Compression: string; Deleted: string; Size: number }[] }).result;
  };
  for (const spelling of ['gzip, deflate, br, zstd', 'BR;q=1.0', '*', 'deflate, gzip;q=0.8, br;q=0.9', 'x-gzip', 'zstd;q=0.3, identity;q=0.1', 'compress']) {
    t.equal((await curl('c.test', '/changing', ...ae(spelling))).headers['x-cache'], 'TCP_HIT', spelling);
  }
  const listed = await pollUntil(records, (l) => l.length === 4);
  t.strictSame(listed.map((r) => r.Compression).sort(), ['-', 'br', 'gzip', 'zstd'], 'however clients spell it: one record per coding');
  t.ok(listed.every((r) => r.Size > 0 && (r.Compression === '-' ? r.Size === TEXT.length + 2 : r.Size < TEXT.length / 4)), 'with their sizes');
  version = 2;
  const purged = await (await fetch(`${api}/command/hardpurge?url=c.test/changing`)).json() as { result: { Count: number } };
  t.equal(purged.result.Count, 4, 'every record of the URL removed');
  t.ok((await records()).every((r) => r.Deleted === 'Y'));
  t.match((await curl('c.test', '/changing', ...ae('br'))).headers, { 'x-cache': 'TCP_MISS' });
  for (const [c, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync], ['zstd', zstdDecompressSync]] as const) {
    const r = await curl('c.test', '/changing', ...ae(c));
    t.equal(decode(r.body).toString(), `${TEXT}v2`, c);
  }
  t.equal(origin.count('/changing'), 2);
});

t.test('useOriginEncoding false: the origin is asked for identity once, and the edge encodes for every client', async (t) => {
  const lastSeen = (): string | undefined => origin.seen.filter((r) => r.url === '/negotiating').at(-1)?.headers['accept-encoding'] as string | undefined;
  const kept = await curl('c.test', '/negotiating', ...ae('gzip'));
  t.equal(lastSeen(), 'gzip', 'by default the origin sees the client\'s Accept-Encoding');
  t.equal(kept.headers['content-encoding'], 'gzip', 'and its coding is kept');
  const first = await curl('own.test', '/negotiating', ...ae('gzip'));
  t.equal(lastSeen(), 'identity');
  t.equal(first.headers['content-encoding'], undefined);
  t.equal(first.body.toString(), TEXT);
  const br = await curl('own.test', '/negotiating', ...ae('br'));
  t.equal(br.headers['x-cache'], 'TCP_HIT', 'one stored copy for every Accept-Encoding');
  t.equal(brotliDecompressSync(br.body).toString(), TEXT);
  const gz = await curl('own.test', '/negotiating', ...ae('gzip'));
  t.equal(gz.headers['x-cache'], 'TCP_HIT');
  t.equal(gunzipSync(gz.body).toString(), TEXT, 'gzip made by the edge');
  t.equal((await curl('own.test', '/negotiating')).body.toString(), TEXT);
  t.equal(origin.count('/negotiating'), 2, 'one fetch for c.test, one for own.test');
});

t.test('a client that would wait for a copy gets identity at once, and the copy serves the next', async (t) => {
  await curl('nowait.test', '/five');
  const first = await curl('nowait.test', '/five', ...ae('br'));
  t.equal(first.headers['content-encoding'], undefined, 'queue.maxWait 0: nobody waits for the compression');
  t.equal(first.body.toString(), TEXT);
  const later = await pollUntil(() => curl('nowait.test', '/five', ...ae('br')), (r) => r.headers['content-encoding'] === 'br');
  t.equal(brotliDecompressSync(later.body).toString(), TEXT);
});

t.test('a full compression queue degrades answers to identity at once instead of making clients wait', async (t) => {
  const paths = ['/big1', '/big2', '/big3', '/big4', '/big5'];
  for (const p of paths) await curl('tight.test', p);
  // One compression may run and none wait (queue concurrency 1, maxQueued 0): while the first
  // copy is made, the other clients get identity.
  const answers = await Promise.all(paths.map((p) => curl('tight.test', p, ...ae('br'))));
  const codings = answers.map((a) => a.headers['content-encoding'] ?? 'identity');
  t.ok(codings.includes('br'), `one copy was made (${codings.join(' ')})`);
  t.ok(codings.includes('identity'), 'the others were not kept waiting for it');
  for (const a of answers) t.equal(a.headers['content-encoding'] === 'br' ? brotliDecompressSync(a.body).toString() : a.body.toString(), BIG);
  for (const a of answers) t.equal(a.headers.vary, 'Accept-Encoding');
});

t.test('the access log shows the coding sent in sc-resinfo and the client\'s Accept-Encoding', async (t) => {
  await curl('c.test', '/six');
  await curl('c.test', '/six', ...ae('zstd;q=0.5, gzip;q=0.4'));
  const file = path.join(server.dir, 'logs', 'c.test', 'access.log');
  const sixes = (): string[][] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [])
    .filter((l) => !l.startsWith('#') && l.includes(' /six ')).map((l) => l.split(' '));
  await until(() => sixes().length >= 2, 'two access lines of /six');
  const fields = fs.readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('#Fields:'))!.split(' ').slice(1);
  const at = (name: string): number => fields.indexOf(name);
  const [miss, hit] = sixes();
  t.equal(miss![at('sc-resinfo')], '-');
  t.equal(hit![at('sc-resinfo')], 'zstd');
  t.equal(hit![at('cs-acceptencoding')], 'zstd;q=0.5,+gzip;q=0.4');
});
