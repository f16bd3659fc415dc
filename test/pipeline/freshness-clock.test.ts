// Freshness as the worker's cache stages decide it, with the time set by the test: the stages
// read the clock the worker was given (CacheContext.clock), so a copy goes stale when the test
// moves the time past its max-age instead of after a real wait (these cases used to wait for
// max-age=1 to run out, test/e2e/cache/stale.test.ts).
import http from 'node:http';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startInProcess } from './fixtures/in-process.js';

const HOST = 'fresh.test';
const origin = await new TestOrigin().start();
const port = await freePort();
const clock = new ManualClock(Date.now());
const p = await startInProcess([{ name: HOST, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }], { clock });
t.teardown(async () => { await p.close(); await origin.stop(); });

interface Answer { status: number; cache: string | undefined; body: string }

function get(path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { host: HOST }, agent: false, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cache: res.headers['x-cache'] as string | undefined, body: Buffer.concat(chunks).toString() }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${path} in 5 s`)));
    req.on('error', reject);
  });
}

/** The origin's clock is the test's too: its Date moves with the time the test sets. */
function originDate(): string {
  return new Date(clock.now()).toUTCString();
}

function answer(status: number, fields: Record<string, string>, body: string, res: http.ServerResponse): void {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), date: originDate(), ...fields });
  res.end(body);
}

t.test('a copy is a hit until the clock passes its max-age; then it is revalidated with its validator, and the 304 makes it fresh again', async (t) => {
  origin.on('/aging', (q, res) => {
    if (q.headers['if-none-match'] === '"a"') { res.writeHead(304, { etag: '"a"', 'cache-control': 'max-age=60', date: originDate() }); res.end(); return; }
    answer(200, { etag: '"a"', 'cache-control': 'max-age=60' }, 'aging copy', res);
  });
  t.same(await get('/aging'), { status: 200, cache: 'TCP_MISS', body: 'aging copy' });
  await clock.advance(59_000);
  t.same(await get('/aging'), { status: 200, cache: 'TCP_HIT', body: 'aging copy' }, 'fresh at 59 s');
  t.equal(origin.count('/aging'), 1);
  await clock.advance(2_000);
  t.same(await get('/aging'), { status: 200, cache: 'TCP_REFRESH_HIT', body: 'aging copy' }, 'stale at 61 s: revalidated, the 304 answered from the copy');
  t.equal(origin.count('/aging'), 2);
  t.equal(origin.seen.filter((s) => s.url === '/aging')[1]?.headers['if-none-match'], '"a"', 'the revalidation was conditional');
  t.same(await get('/aging'), { status: 200, cache: 'TCP_HIT', body: 'aging copy' }, 'fresh again after the 304');
  t.equal(origin.count('/aging'), 2);
});

t.test('stale-if-error: once the copy is stale and the origin answers 500, the stale copy is served (TCP_REF_FAIL_HIT), until the window ends', async (t) => {
  let failing = false;
  origin.on('/sie', (_q, res) => {
    if (failing) answer(500, {}, 'broken', res);
    else answer(200, { 'cache-control': 'max-age=60, stale-if-error=600', etag: '"s"' }, 'good copy', res);
  });
  t.equal((await get('/sie')).cache, 'TCP_MISS');
  failing = true;
  await clock.advance(61_000);
  t.same(await get('/sie'), { status: 200, cache: 'TCP_REF_FAIL_HIT', body: 'good copy' }, 'stale, within stale-if-error');
  t.equal(origin.count('/sie'), 2, 'the origin was asked first');
  await clock.advance(600_000);
  const late = await get('/sie');
  t.equal(late.status, 500, 'beyond the window the origin\'s answer goes to the client');
  t.equal(late.body, 'broken');
  t.equal(origin.count('/sie'), 3);
});

t.test("a hit's Cache-Status ttl is what remains at that hit: the same within one second, lower once the clock moves on", async (t) => {
  origin.on('/ttl', (_q, res) => answer(200, { 'cache-control': 'max-age=100' }, 'ttl copy', res));
  const status = (): Promise<string | undefined> => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/ttl', headers: { host: HOST }, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.headers['cache-status'] as string | undefined));
    }).on('error', reject);
  });
  t.match(await status(), /fwd=uri-miss/);
  const ttl = (field: string | undefined): number => Number(/^svc; hit; ttl=(\d+)$/.exec(field ?? '')?.[1]);
  const first = await status();
  t.ok(ttl(first) >= 99 && ttl(first) <= 100, `a hit right after the miss: ${first}`);
  t.equal(await status(), first, 'a second hit in the same second says the same');
  await clock.advance(30_000);
  const later = ttl(await status());
  t.equal(later, ttl(first) - 30, '30 s later, 30 less');
  await clock.advance(1_000);
  t.equal(ttl(await status()), later - 1, 'one second later, one less');
});

t.test('a 304 that repeats every stored field, its old Date too, renews the copy: the Age of each answer counts from that 304', async (t) => {
  // The Date of an answer that waited 30 s upstream, the same in the 200 and in every 304.
  const date = new Date(clock.now() - 30_000).toUTCString();
  const fields = { etag: '"r"', 'cache-control': 'max-age=0', date };
  origin.on('/renew', (q, res) => {
    if (q.headers['if-none-match'] === '"r"') { res.writeHead(304, fields); res.end(); return; }
    answer(200, fields, 'renewed copy', res);
  });
  const ask = (): Promise<{ cache: string | undefined; age: string | undefined }> => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/renew', headers: { host: HOST }, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ cache: res.headers['x-cache'] as string | undefined, age: res.headers.age }));
    }).on('error', reject);
  });
  t.same(await ask(), { cache: 'TCP_MISS', age: undefined }, 'the fetched answer has no Age of ours');
  await clock.advance(10_000);
  t.same(await ask(), { cache: 'TCP_REFRESH_HIT', age: '40' }, '10 s later: revalidated, 40 s since its Date');
  await clock.advance(5_000);
  t.same(await ask(), { cache: 'TCP_REFRESH_HIT', age: '45' }, 'after a second 304 that said the same: 45 s');
  t.equal(origin.count('/renew'), 3);
});
