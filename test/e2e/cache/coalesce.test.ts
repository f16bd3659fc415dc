// Request collapsing: concurrent misses for one URL share one origin fetch, and readers follow
// the download as it arrives (read-while-writer). An answer that may not be stored is not shared.
import crypto from 'node:crypto';
import t from 'tap';
import { request } from 'undici';
import { cacheBench, HOST } from './fixtures/bench.js';
import { waitFor } from '../../helpers/wait.js';

const { origin, get, port } = await cacheBench();
const SIZE = 256 * 1024;
const payload = crypto.randomBytes(SIZE);
const sha = (b: Buffer): string => crypto.createHash('sha256').update(b).digest('hex');

/**
 * Headers after 300 ms, then the body in 16 chunks of 16 KiB with 40 ms pauses; chunksSent: how
 * many went out; finishedAt: the last chunk sent.
 */
function slowOrigin(path: string, headers: Record<string, string>): { chunksSent: () => number; finishedAt: () => number } {
  let finished = 0;
  let sent = 0;
  origin.on(path, (_q, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(SIZE), ...headers });
      let i = 0;
      const next = (): void => {
        if (i === 16) { res.end(); return; }
        res.write(payload.subarray(i * 16384, (i + 1) * 16384));
        sent++;
        if (i === 15) finished = Date.now();
        i++;
        setTimeout(next, 40);
      };
      next();
    }, 300);
  });
  return { chunksSent: () => sent, finishedAt: () => finished };
}

t.test('50 concurrent requests for a new URL: the origin is asked once and all 50 get the whole body intact', async (t) => {
  slowOrigin('/big', { 'cache-control': 'max-age=600' });
  const answers = await Promise.all(Array.from({ length: 50 }, () => get('/big')));
  t.equal(origin.count('/big'), 1, 'one origin fetch');
  const want = sha(payload);
  t.equal(answers.filter((a) => a.status === 200 && a.raw.length === SIZE && sha(a.raw) === want).length, 50, 'all 50 bodies intact');
  t.same([...new Set(answers.map((a) => a.headers['content-length']))], [String(SIZE)]);
  const after = await get('/big');
  t.equal(after.headers['x-cache'], 'TCP_HIT');
  t.equal(sha(after.raw), want);
  t.equal(origin.count('/big'), 1);
});

t.test('a client receives bytes before the origin has finished sending (read-while-writer)', async (t) => {
  const o = slowOrigin('/stream', { 'cache-control': 'max-age=600' });
  const first = get('/stream');
  t.ok(await waitFor(() => o.chunksSent() >= 3), 'the head is out and a few chunks have left the origin');
  const r = await request(`http://127.0.0.1:${port}/stream`, { headers: { host: HOST } });
  t.equal(r.statusCode, 200);
  let firstByteAt = 0;
  let got = 0;
  const chunks: Buffer[] = [];
  for await (const c of r.body) { if (firstByteAt === 0) firstByteAt = Date.now(); got += (c as Buffer).length; chunks.push(c as Buffer); }
  t.ok(o.finishedAt() > 0 && firstByteAt < o.finishedAt(), `first byte ${o.finishedAt() - firstByteAt} ms before the origin sent its last chunk`);
  t.equal(got, SIZE);
  t.equal(sha(Buffer.concat(chunks)), sha(payload));
  t.equal(sha((await first).raw), sha(payload));
  t.equal(origin.count('/stream'), 1, 'the latecomer joined the running fetch');
});

t.test('an answer that may not be stored (private) is not shared: each waiting client gets its own origin fetch', async (t) => {
  let n = 0;
  origin.on('/private', (_q, res) => {
    const mine = ++n;
    setTimeout(() => {
      const body = `for request ${mine}`;
      res.writeHead(200, { 'cache-control': 'private, max-age=600', 'content-length': String(body.length) });
      res.end(body);
    }, 300);
  });
  const answers = await Promise.all(Array.from({ length: 5 }, () => get('/private')));
  t.equal(origin.count('/private'), 5, 'five origin fetches');
  t.equal(new Set(answers.map((a) => a.body)).size, 5, 'no two clients got the same private answer');
  t.ok(answers.every((a) => a.status === 200 && /^for request \d$/.test(a.body)));
});
