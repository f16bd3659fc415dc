// Partial storage (RFC 9111 3.3, 3.4): Range misses and objects above limitMaxRange are fetched
// from the origin in aligned pieces by Range requests, stored as spans, combined under one
// strong validator, and served piece after piece. The origin here makes its bytes up from the
// offset (nothing large is on disk) and counts the Range requests and bytes it sends.
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import t from 'tap';
import { request } from 'undici';
import { cacheBench, HOST } from './fixtures/bench.js';
import type { SeenRequest } from '../../helpers/origin.js';
import { pollUntil, until } from '../../helpers/wait.js';

const PART = 65536;
const LIMIT = 4 * PART;
const GiB4 = 2 ** 32;

const { origin, server, get } = await cacheBench({
  extra: {
    functions: { network: { cache: { partSize: PART, limitMaxRange: LIMIT } } },
    // The statistics show the clients in progress (ClientSession): the two-client test waits on it.
    env: { management: { cluster: { stats: { enable: true } } } },
  },
});

/** Byte `i` of representation `v`: a function of the offset, so any range can be made and checked. */
function bytes(start: number, end: number, v = 0): Buffer {
  const b = Buffer.allocUnsafe(end - start + 1);
  for (let i = start; i <= end; i++) b[i - start] = (((i * 2654435761) >>> 13) + v * 31) & 255;
  return b;
}

interface Generated { total: number; etag: string; v: number; sent: number; ranges: string[]; full: number; hold?: Promise<void> }

/** An origin object of `total` bytes that serves Range (one range) with 206, else 200 streamed. */
function generated(path: string, total: number, etag = '"v1"'): Generated {
  const g: Generated = { total, etag, v: 0, sent: 0, ranges: [], full: 0 };
  origin.on(path, (q: SeenRequest, res: ServerResponse) => {
    const send = (): void => {
      const base = { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=600', etag: g.etag, 'accept-ranges': 'bytes' };
      const m = /^bytes=(\d*)-(\d*)$/.exec(String(q.headers.range ?? ''));
      if (m === null) {
        g.full++;
        res.writeHead(200, { ...base, 'content-length': g.total });
        stream(res, g, 0, g.total - 1);
        return;
      }
      g.ranges.push(String(q.headers.range));
      let start: number;
      let end: number;
      if (m[1] === '') { start = Math.max(0, g.total - Number(m[2])); end = g.total - 1; }
      else { start = Number(m[1]); end = m[2] === '' ? g.total - 1 : Math.min(Number(m[2]), g.total - 1); }
      if (start >= g.total) { res.writeHead(416, { 'content-range': `bytes */${g.total}`, 'content-length': 0 }); res.end(); return; }
      res.writeHead(206, { ...base, 'content-range': `bytes ${start}-${end}/${g.total}`, 'content-length': end - start + 1 });
      stream(res, g, start, end);
    };
    if (g.hold === undefined) send(); else void g.hold.then(send);
  });
  return g;
}

/** Writes the bytes in 64 KiB chunks as the socket takes them; stops when the client leaves. */
function stream(res: ServerResponse, g: Generated, start: number, end: number): void {
  let pos = start;
  const more = (): void => {
    while (pos <= end && !res.destroyed) {
      const stop = Math.min(end, pos + 65535);
      const chunk = bytes(pos, stop, g.v);
      g.sent += chunk.length;
      pos = stop + 1;
      if (!res.write(chunk)) { res.once('drain', more); return; }
    }
    if (!res.destroyed) res.end();
  };
  more();
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function fileinfo(path: string): Promise<Record<string, unknown>[]> {
  const r = await request(`http://127.0.0.1:${server.apiPort}/monitoring/fileinfo?url=${HOST}${path}`);
  return ((await r.body.json()) as { result?: Record<string, unknown>[] }).result ?? [];
}

async function realtime(): Promise<{ Host: { ClientSession: number } }> {
  const r = await request(`http://127.0.0.1:${server.apiPort}/monitoring/realtime`);
  return (await r.body.json()) as { Host: { ClientSession: number } };
}

t.test('a range in the middle of an uncached 4 GiB object costs the origin one piece, and is a hit afterwards', async (t) => {
  const g = generated('/huge', GiB4);
  const r = await get('/huge', { range: 'bytes=3000000000-3000000999' });
  t.equal(r.status, 206);
  t.equal(r.headers['content-range'], `bytes 3000000000-3000000999/${GiB4}`);
  t.equal(r.headers['content-length'], '1000');
  t.ok(r.raw.equals(bytes(3000000000, 3000000999)), 'the bytes of that range');
  const first = Math.floor(3000000000 / PART) * PART;
  t.same(g.ranges, [`bytes=${first}-${first + PART - 1}`], 'one aligned piece asked for');
  t.equal(g.sent, PART, 'the origin sent one piece, not the object');
  t.equal(g.full, 0);
  const again = await get('/huge', { range: 'bytes=3000000500-3000001499' });
  t.equal(again.status, 206);
  t.equal(again.headers['x-cache'], 'TCP_HIT');
  t.ok(again.raw.equals(bytes(3000000500, 3000001499)));
  t.equal(g.ranges.length, 1, 'the stored piece answered it');
});

t.test('fileinfo shows an object stored in pieces as Fragmented with CachedSize below Size', async (t) => {
  // The piece reaches the disk store (and its index) a moment after it was served.
  const records = await pollUntil(() => fileinfo('/huge'), (l) => l.some((x) => x.LocalPath !== '-'), { timeoutMs: 10_000, intervalMs: 50 });
  t.equal(records.length, 1, 'one record for the object');
  const rec = records[0];
  t.equal(rec!.Fragmented, 'Y');
  t.equal(rec!.Size, GiB4);
  t.equal(rec!.CachedSize, PART);
  t.equal(rec!.ResponseCode, 206);
});

t.test('a client reading a piece another client is fetching waits for that fetch: one origin request', async (t) => {
  const g = generated('/shared', GiB4);
  let release = (): void => undefined;
  g.hold = new Promise((ok) => { release = ok; });
  const a = get('/shared', { range: 'bytes=100-199' });
  await until(() => origin.count('/shared') === 1, 'the piece fetch under way');
  const b = get('/shared', { range: 'bytes=1000-1999' });
  // The piece is held until the node counts both clients in progress: the second one is then
  // waiting on the first one's fetch, not arriving after the piece was stored.
  await pollUntil(realtime, (v) => v.Host.ClientSession === 2, { timeoutMs: 10_000, intervalMs: 50 });
  t.equal(origin.count('/shared'), 1, 'no second fetch while the first is held');
  release();
  const [ra, rb] = await Promise.all([a, b]);
  t.equal(ra.status, 206);
  t.equal(rb.status, 206);
  t.ok(ra.raw.equals(bytes(100, 199)));
  t.ok(rb.raw.equals(bytes(1000, 1999)));
  t.equal(origin.count('/shared'), 1, 'one origin request for the piece');
  t.equal(g.sent, PART);
});

t.test('bytes=-N on an uncached object asks the origin for that suffix, and later suffixes it covers are hits', async (t) => {
  const g = generated('/suffix', GiB4);
  const r = await get('/suffix', { range: 'bytes=-1000' });
  t.equal(r.status, 206);
  t.equal(r.headers['content-range'], `bytes ${GiB4 - 1000}-${GiB4 - 1}/${GiB4}`);
  t.ok(r.raw.equals(bytes(GiB4 - 1000, GiB4 - 1)));
  t.same(g.ranges, ['bytes=-1000']);
  const hit = await get('/suffix', { range: 'bytes=-500' });
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.ok(hit.raw.equals(bytes(GiB4 - 500, GiB4 - 1)));
  t.equal(g.ranges.length, 1);
  // Longer than what is stored: the missing bytes come as aligned pieces, combined with the stored span.
  const long = await get('/suffix', { range: 'bytes=-100000' });
  t.equal(long.status, 206);
  t.equal(long.headers['content-range'], `bytes ${GiB4 - 100000}-${GiB4 - 1}/${GiB4}`);
  t.ok(long.raw.equals(bytes(GiB4 - 100000, GiB4 - 1)), 'stored and fetched bytes in order');
  t.same(g.ranges.slice(1), [`bytes=${GiB4 - 2 * PART}-${GiB4 - PART - 1}`, `bytes=${GiB4 - PART}-${GiB4 - 1}`]);
});

t.test('an open range bytes=N- is answered to the end from the pieces that hold it', async (t) => {
  const total = 300000;
  const g = generated('/open', total);
  const r = await get('/open', { range: 'bytes=200000-' });
  t.equal(r.status, 206);
  t.equal(r.headers['content-range'], `bytes 200000-${total - 1}/${total}`);
  t.ok(r.raw.equals(bytes(200000, total - 1)));
  t.same(g.ranges, [`bytes=${3 * PART}-${4 * PART - 1}`, `bytes=${4 * PART}-${total - 1}`], 'the second piece asked up to the length the first told');
  t.equal(g.sent, total - 3 * PART, 'the two pieces, the last one short');
});

t.test('a full GET of an object above limitMaxRange is stored in pieces and served whole from them (same bytes)', async (t) => {
  const total = 16 * PART + 4321;
  const g = generated('/whole', total);
  const r = await get('/whole');
  t.equal(r.status, 200);
  t.equal(r.headers['content-length'], String(total));
  t.equal(r.raw.length, total);
  t.equal(sha(r.raw), sha(bytes(0, total - 1)), 'the object assembled from its pieces');
  t.equal(g.full, 1, 'the whole answer was given up at its head');
  t.equal(g.ranges.length, 17, 'then fetched in 17 pieces');
  const hit = await get('/whole');
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.equal(sha(hit.raw), sha(bytes(0, total - 1)));
  t.equal(g.ranges.length, 17, 'served from the stored pieces');
  const mid = await get('/whole', { range: `bytes=${PART - 10}-${PART + 9}` });
  t.equal(mid.status, 206);
  t.ok(mid.raw.equals(bytes(PART - 10, PART + 9)), 'a range across two pieces');
});

t.test('a changed ETag between pieces drops the stored pieces and the old bytes are fetched again', async (t) => {
  const g = generated('/changing', 8 * PART);
  const first = await get('/changing', { range: 'bytes=0-99' });
  t.equal(first.headers.etag, '"v1"');
  t.ok(first.raw.equals(bytes(0, 99)));
  g.etag = '"v2"';
  g.v = 1;
  const other = await get('/changing', { range: `bytes=${5 * PART}-${5 * PART + 99}` });
  t.equal(other.status, 206);
  t.equal(other.headers.etag, '"v2"', 'the new representation');
  t.ok(other.raw.equals(bytes(5 * PART, 5 * PART + 99, 1)));
  const again = await get('/changing', { range: 'bytes=0-99' });
  t.equal(again.headers.etag, '"v2"', 'never a piece of the old object');
  t.ok(again.raw.equals(bytes(0, 99, 1)));
  t.equal(g.ranges.length, 3, 'the first piece was fetched again');
  const whole = await get('/changing');
  t.equal(sha(whole.raw), sha(bytes(0, 8 * PART - 1, 1)), 'the whole object is all the new representation');
});

t.test('a purge drops every piece of the object', async (t) => {
  const g = generated('/purged', 4 * PART);
  await get('/purged', { range: 'bytes=0-9' });
  await get('/purged', { range: `bytes=${2 * PART}-${2 * PART + 9}` });
  t.equal(g.ranges.length, 2);
  const r = await request(`http://127.0.0.1:${server.apiPort}/command/purge?url=${HOST}/purged`);
  t.equal(r.statusCode, 200);
  await r.body.dump();
  const a = await get('/purged', { range: 'bytes=0-9' });
  const b = await get('/purged', { range: `bytes=${2 * PART}-${2 * PART + 9}` });
  t.equal(a.headers['x-cache'], 'TCP_MISS');
  t.equal(b.headers['x-cache'], 'TCP_MISS');
  t.equal(g.ranges.length, 4, 'both pieces fetched again');
});

t.test('an origin that ignores Range: an object of one piece is stored whole from that answer, a longer one is fetched whole', async (t) => {
  const small = bytes(0, 999);
  const large = bytes(0, 5 * PART - 1);
  const ignoring = (body: Buffer) => (_q: SeenRequest, res: ServerResponse): void => {
    res.writeHead(200, { 'cache-control': 'max-age=600', etag: '"n"', 'content-length': body.length });
    res.end(body);
  };
  origin.on('/noranges-small', ignoring(small)).on('/noranges-large', ignoring(large));
  const r = await get('/noranges-small', { range: 'bytes=10-19' });
  t.equal(r.status, 206);
  t.ok(r.raw.equals(bytes(10, 19)));
  const hit = await get('/noranges-small', { range: 'bytes=20-29' });
  t.equal(hit.headers['x-cache'], 'TCP_HIT');
  t.ok(hit.raw.equals(bytes(20, 29)));
  t.equal(origin.count('/noranges-small'), 1, 'its 200 was the whole object, stored');
  const l = await get('/noranges-large', { range: 'bytes=10-19' });
  t.equal(l.status, 200, 'answered with the whole object, as fetched');
  t.equal(sha(l.raw), sha(large));
  const lhit = await get('/noranges-large', { range: `bytes=${PART}-${PART + 9}` });
  t.equal(lhit.status, 206);
  t.equal(lhit.headers['x-cache'], 'TCP_HIT');
  t.ok(lhit.raw.equals(bytes(PART, PART + 9)));
  t.equal(origin.count('/noranges-large'), 2, 'the piece request (given up at its head), then the whole object');
});

t.test('a client conditional is answered from the stored pieces: 304 for the current ETag', async (t) => {
  const g = generated('/cond', 8 * PART, '"c1"');
  await get('/cond', { range: 'bytes=0-9' });
  const r = await get('/cond', { range: 'bytes=0-9', 'if-none-match': '"c1"' });
  t.equal(r.status, 304);
  t.equal(r.headers.etag, '"c1"');
  t.equal(r.raw.length, 0);
  const other = await get('/cond', { range: 'bytes=0-9', 'if-none-match': '"old"' });
  t.equal(other.status, 206);
  t.equal(g.ranges.length, 1, 'both answered without the origin');
});

t.test('an object that changes while a full GET streams from its pieces cuts that answer; the next one is all new', async (t) => {
  const g = generated('/midway', 8 * PART);
  await get('/midway', { range: 'bytes=0-9' });
  g.etag = '"v2"';
  g.v = 1;
  await t.rejects(get('/midway'), 'the status line and the old first piece were out: the connection is cut');
  const next = await get('/midway');
  t.equal(next.status, 200);
  t.equal(sha(next.raw), sha(bytes(0, 8 * PART - 1, 1)));
});

/** An origin piece that sends its first `early` bytes, then waits for `go` (or breaks off). */
function heldPiece(path: string): { go: () => void; breakOff: () => void; seen: () => number } {
  let release: (how: 'go' | 'break') => void = () => undefined;
  const held = new Promise<'go' | 'break'>((ok) => { release = ok; });
  let seen = 0;
  origin.on(path, (q: SeenRequest, res: ServerResponse) => {
    seen++;
    const m = /^bytes=(\d+)-(\d+)$/.exec(String(q.headers.range ?? ''))!;
    const start = Number(m[1]);
    const end = Number(m[2]);
    res.writeHead(206, {
      'content-type': 'application/octet-stream', 'cache-control': 'max-age=600', etag: '"h1"', 'accept-ranges': 'bytes',
      'content-range': `bytes ${start}-${end}/${GiB4}`, 'content-length': end - start + 1,
    });
    const early = 4096;
    res.write(bytes(start, start + early - 1));
    void held.then((how) => {
      if (how === 'break') { res.destroy(); return; }
      // The rest in two parts, paced: a client waiting for bytes further on sees them arrive in
      // steps, the first of which does not reach its range yet.
      const rest = bytes(start + early, end);
      res.write(rest.subarray(0, 16384));
      setTimeout(() => res.end(rest.subarray(16384)), 50);
    });
  });
  return { go: () => release('go'), breakOff: () => release('break'), seen: () => seen };
}

t.test('a range early in a piece is answered while the rest of the piece is still arriving, and the whole piece is stored after', async (t) => {
  const h = heldPiece('/early');
  const r = await get('/early', { range: 'bytes=100-1099' });
  t.equal(r.status, 206, 'answered before the origin sent the rest of the piece');
  t.ok(r.raw.equals(bytes(100, 1099)));
  const tail = get('/early', { range: 'bytes=60000-65535' });
  await pollUntil(realtime, (v) => v.Host.ClientSession === 1, { timeoutMs: 10_000, intervalMs: 50 });
  h.go();
  const end = await tail;
  t.equal(end.status, 206, 'a client waiting for the end of the piece gets it as it arrives');
  t.ok(end.raw.equals(bytes(60000, 65535)));
  const later = await pollUntil(() => get('/early', { range: 'bytes=60000-60999' }), (a) => a.headers['x-cache'] === 'TCP_HIT', { timeoutMs: 10_000, intervalMs: 50 });
  t.ok(later.raw.equals(bytes(60000, 60999)), 'the rest of the piece, from the store');
  t.equal(h.seen(), 1, 'one origin request for the piece');
});

t.test('a piece that breaks off before a client\'s bytes arrived answers that client 502, and nothing is stored', async (t) => {
  const h = heldPiece('/broken');
  const late = get('/broken', { range: 'bytes=50000-50999' });
  await until(() => h.seen() === 1, 'the piece fetch under way');
  h.breakOff();
  const r = await late;
  t.equal(r.status, 502);
  const again = heldPiece('/broken');
  const next = get('/broken', { range: 'bytes=10-19' });
  const n = await next;
  t.equal(n.status, 206, 'the next client fetches the piece again');
  t.ok(n.raw.equals(bytes(10, 19)));
  again.go();
  t.equal(again.seen(), 1);
});
