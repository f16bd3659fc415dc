// RFC 9110 9.3.2 (HEAD), 14 (Range, 206, multipart/byteranges, 416) and 13.1.5 (If-Range),
// answered from a cached full object without asking the origin again.
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
