// RFC 9110 9.3.2 (HEAD), 14 (Range, 206, multipart/byteranges, 416) and 13.1.5 (If-Range),
// answered from a cached full object without asking the origin again; and, with the default
// settings, partial answers of the origin (206) stored, reused for the ranges they hold and
// completed into the whole object under one strong validator (RFC 9111 3.3, 3.4).
import t from 'tap';
import { cacheBench, reply } from './fixtures/bench.js';

const { origin, get } = await cacheBench();
const BODY = 'abcdefghijklmnopqrstuvwxyz0123456789'; // 36 bytes
const object = (path: string) => origin.on(path, reply(200, { 'cache-control': 'max-age=600', etag: '"r1"', 'x-meta': 'kept' }, BODY));

async function warm(path: string): Promise<void> {
  object(path);
  await get(path);
}

t.test('HEAD after a GET is answered from the cache with the same fields and no body', async (t) => {
  await warm('/head');
  const full = await get('/head');
  const head = await get('/head', {}, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.body, '');
  t.equal(head.headers['x-cache'], 'TCP_HIT');
  for (const f of ['content-length', 'content-type', 'etag', 'x-meta', 'cache-control']) t.equal(head.headers[f], full.headers[f], `${f} as on the GET`);
  t.equal(origin.count('/head'), 1);
});

t.test('Range bytes=0-9 is answered 206 with Content-Range from the cached object', async (t) => {
  await warm('/range');
  const r = await get('/range', { range: 'bytes=0-9' });
  t.equal(r.status, 206);
  t.equal(r.body, 'abcdefghij');
  t.equal(r.headers['content-range'], 'bytes 0-9/36');
  t.equal(r.headers['content-length'], '10');
  t.equal(origin.count('/range'), 1, 'the origin was not asked again');
});

t.test('a suffix range bytes=-5 gives the last five bytes', async (t) => {
  await warm('/suffix');
  const r = await get('/suffix', { range: 'bytes=-5' });
  t.equal(r.status, 206);
  t.equal(r.body, '56789');
  t.equal(r.headers['content-range'], 'bytes 31-35/36');
  t.equal(origin.count('/suffix'), 1);
});

t.test('a Range on a miss asks the origin for the piece that holds it; an object of one piece answered whole is stored whole', async (t) => {
  object('/range-miss');
  const r = await get('/range-miss', { range: 'bytes=0-3' });
  t.equal(r.status, 206);
  t.equal(r.body, 'abcd');
  t.equal(r.headers['content-range'], 'bytes 0-3/36');
  const seen = origin.seen.find((s) => s.url === '/range-miss')!;
  t.equal(seen.headers.range, `bytes=0-${4 * 1024 * 1024 - 1}`, 'the first piece (partSize) is asked for');
  const again = await get('/range-miss', { range: 'bytes=4-7' });
  t.equal(again.status, 206);
  t.equal(again.body, 'efgh');
  t.equal(origin.count('/range-miss'), 1);
});

t.test('bytes=0-1,5-6 is answered 206 multipart/byteranges with both parts', async (t) => {
  await warm('/multi');
  const r = await get('/multi', { range: 'bytes=0-1,5-6' });
  t.equal(r.status, 206);
  const m = /^multipart\/byteranges; *boundary=("?)([^";]+)\1/.exec(String(r.headers['content-type']));
  t.ok(m, `content-type ${String(r.headers['content-type'])}`);
  const boundary = m![2]!;
  t.equal(Number(r.headers['content-length']), r.raw.length, 'Content-Length is the multipart length');
  const parts = r.body.split(`--${boundary}`).slice(1, -1);
  t.equal(parts.length, 2);
  t.match(parts[0]!, /content-range: bytes 0-1\/36\r\n/i);
  t.match(parts[0]!, /content-type: text\/plain\r\n/i);
  t.match(parts[0]!, /\r\n\r\nab\r\n$/);
  t.match(parts[1]!, /content-range: bytes 5-6\/36\r\n/i);
  t.match(parts[1]!, /\r\n\r\nfg\r\n$/);
  t.ok(r.body.endsWith(`--${boundary}--\r\n`) || r.body.endsWith(`--${boundary}--`), 'closed by the final boundary');
  t.equal(origin.count('/multi'), 1);
});

t.test('an unsatisfiable bytes=9999- is answered 416 with Content-Range: bytes */36', async (t) => {
  await warm('/unsat');
  const r = await get('/unsat', { range: 'bytes=9999-' });
  t.equal(r.status, 416);
  t.equal(r.headers['content-range'], 'bytes */36');
  t.equal(origin.count('/unsat'), 1);
});

t.test('If-Range with the current ETag applies the Range; with an old ETag the answer is 200 in full', async (t) => {
  await warm('/if-range');
  const current = await get('/if-range', { range: 'bytes=0-2', 'if-range': '"r1"' });
  t.equal(current.status, 206);
  t.equal(current.body, 'abc');
  const old = await get('/if-range', { range: 'bytes=0-2', 'if-range': '"r0"' });
  t.equal(old.status, 200);
  t.equal(old.body, BODY);
  t.equal(old.headers['content-range'], undefined);
  t.equal(origin.count('/if-range'), 1);
});

/**
 * An origin object of `total` bytes that answers each Range with at most `cap` bytes from where
 * the range starts (206, as origins that bound the length of a range answer do); the Range
 * fields it saw are listed.
 */
function capped(path: string, total: number, cap: number, fields: Record<string, string>): { ranges: string[]; body: (v?: string) => Buffer; set: (f: Record<string, string>, v: string) => void } {
  let version = 'a';
  let headers = fields;
  const ranges: string[] = [];
  const body = (v = version): Buffer => Buffer.from(Array.from({ length: total }, (_, i) => `${v}${i % 10}`[i % 2]).join(''));
  origin.on(path, (q, res) => {
    const m = /^bytes=(\d+)-(\d*)$/.exec(String(q.headers.range ?? ''));
    const all = body();
    if (m === null) { res.writeHead(200, { ...headers, 'content-length': total }); res.end(all); return; }
    ranges.push(String(q.headers.range));
    const start = Number(m[1]);
    const end = Math.min(m[2] === '' ? total - 1 : Number(m[2]), total - 1, start + cap - 1);
    res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${total}`, 'content-length': end - start + 1 });
    res.end(all.subarray(start, end + 1));
  });
  return { ranges, body, set: (f, v) => { headers = f; version = v; } };
}

const STRONG = { 'cache-control': 'max-age=600', etag: '"p1"', 'accept-ranges': 'bytes' };

t.test('a stored partial answer serves later ranges it holds, is completed by the rest, and a full GET is then a hit from the stored parts', async (t) => {
  const o = capped('/parts', 300, 100, STRONG);
  const all = o.body();
  const first = await get('/parts', { range: 'bytes=0-99' });
  t.equal(first.status, 206);
  t.equal(first.headers['content-range'], 'bytes 0-99/300');
  t.ok(first.raw.equals(all.subarray(0, 100)));
  const same = await get('/parts', { range: 'bytes=0-99' });
  t.equal(same.headers['x-cache'], 'TCP_HIT', 'the same range again: from the stored part');
  t.ok(same.raw.equals(all.subarray(0, 100)));
  const inside = await get('/parts', { range: 'bytes=10-50' });
  t.equal(inside.status, 206);
  t.equal(inside.headers['x-cache'], 'TCP_HIT', 'a range inside the stored part');
  t.equal(inside.headers['content-range'], 'bytes 10-50/300');
  t.ok(inside.raw.equals(all.subarray(10, 51)));
  t.same(o.ranges, [`bytes=0-${4 * 1024 * 1024 - 1}`], 'one origin request so far');
  const rest = await get('/parts', { range: 'bytes=100-' });
  t.equal(rest.status, 206);
  t.equal(rest.headers['content-range'], 'bytes 100-299/300');
  t.ok(rest.raw.equals(all.subarray(100)), 'the rest, as the origin gave it in two short answers');
  t.same(o.ranges.slice(1), ['bytes=100-299', 'bytes=200-299'], 'only the bytes not stored were asked for');
  const whole = await get('/parts');
  t.equal(whole.status, 200);
  t.equal(whole.headers['x-cache'], 'TCP_HIT', 'the whole object, assembled from the three stored parts');
  t.equal(whole.headers['content-length'], '300');
  t.ok(whole.raw.equals(all));
  t.equal(o.ranges.length, 3, 'no origin request for the full GET');
  t.equal(origin.count('/parts'), 3);
});

t.test('a stored partial answer is replaced, not combined, when the rest comes with another ETag', async (t) => {
  const o = capped('/parts-changed', 200, 100, STRONG);
  await get('/parts-changed', { range: 'bytes=0-99' });
  o.set({ ...STRONG, etag: '"p2"' }, 'b');
  const changed = o.body('b');
  const rest = await get('/parts-changed', { range: 'bytes=100-' });
  t.equal(rest.status, 206);
  t.equal(rest.headers.etag, '"p2"', 'the new representation');
  t.ok(rest.raw.equals(changed.subarray(100)));
  const whole = await get('/parts-changed');
  t.equal(whole.headers.etag, '"p2"');
  t.ok(whole.raw.equals(changed), 'the old part was dropped and fetched again');
});

t.test('a partial answer without a strong validator serves only ranges inside it and is never combined', async (t) => {
  const o = capped('/parts-weak', 300, 100, { 'cache-control': 'max-age=600', etag: 'W/"w1"', 'accept-ranges': 'bytes' });
  const all = o.body();
  const first = await get('/parts-weak', { range: 'bytes=0-99' });
  t.equal(first.status, 206);
  t.ok(first.raw.equals(all.subarray(0, 100)));
  t.equal(origin.count('/parts-weak'), 1, 'one origin request: the answer held the range');
  const inside = await get('/parts-weak', { range: 'bytes=10-50' });
  t.equal(inside.headers['x-cache'], 'TCP_HIT', 'a range inside the stored part');
  t.ok(inside.raw.equals(all.subarray(10, 51)));
  t.equal(origin.count('/parts-weak'), 1);
  const across = await get('/parts-weak', { range: 'bytes=50-149' });
  t.equal(across.status, 206);
  t.not(across.headers['x-cache'], 'TCP_HIT', 'a range beyond the stored part is not completed from it');
  t.equal(across.headers['content-range'], 'bytes 50-149/300');
  t.ok(across.raw.equals(all.subarray(50, 150)));
  const whole = await get('/parts-weak');
  t.equal(whole.status, 200);
  t.equal(whole.headers['x-cache'], 'TCP_MISS');
  t.ok(whole.raw.equals(all), 'a full GET is fetched whole');
  t.equal(whole.headers['content-length'], '300');
  t.equal(origin.seen.filter((s) => s.url === '/parts-weak').at(-1)!.headers.range, undefined, 'without Range');
});
