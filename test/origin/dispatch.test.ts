// OriginSet.dispatch: the callback form of request() the cache miss path uses. Same failover,
// same head; the body goes to callbacks, can be paused, turned into a Readable, or discarded.
import t from 'tap';
import { OriginError, OriginSet, OriginTrace, type OriginBody, type OriginHead } from '../../lib/origin/index.js';
import { ORIGIN_FIELDS, originLine } from '../../lib/log/origin/line.js';
import { LineClock } from '../../lib/log/access/fields.js';
import { deadPort, startOrigin, originSets } from './fixtures/origins.js';
import { until } from '../helpers/wait.js';

const big = Buffer.alloc(3 * 1024 * 1024, 7);
/** The origin's side of the last /big answer: how much of it left for the client's socket. */
let bigSocket: { bytesWritten: number; writableLength: number } | undefined;
/** The origin's side of the last /slow answer (never finished) was closed. */
let slowClosed = false;
const origin = await startOrigin((req, res, body) => {
  if (req.url === '/big') { bigSocket = res.socket ?? undefined; res.writeHead(200, { 'content-length': String(big.length) }); res.end(big); return; }
  if (req.url === '/dup') {
    // Raw pairs as a list: repeated fields, their spelling, a name that is a prototype key.
    res.writeHead(200, ['X-Dup', '1', 'Content-Type', 'text/plain', 'x-dup', '2', 'X-DUP', '3', '__proto__', 'p', 'Content-Length', '2']);
    res.end('ok');
    return;
  }
  if (req.url === '/logged') {
    res.writeHead(200, ['Cache-Control', 'max-age=60, public', 'Content-Encoding', 'gzip', 'Content-Length', '2', 'content-encoding', 'br']);
    res.end('ok');
    return;
  }
  if (req.url === '/hints') { res.writeEarlyHints({ link: '</a.css>; rel=preload' }); res.writeHead(200, { 'content-length': '2' }); res.end('ok'); return; }
  if (req.url === '/slow') { slowClosed = false; res.on('close', () => { slowClosed = true; }); res.writeHead(200, { 'content-length': '1000' }); res.write('partial'); return; }
  if (req.url === '/cut') { res.writeHead(200, { 'content-length': '1000' }); res.write('partial'); setTimeout(() => res.destroy(), 50); return; }
  res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], 'X-Mixed-Case': 'v' });
  res.end(`${req.method} ${req.url}${body === '' ? '' : ` ${body}`}`);
});
const set = originSets(origin, (fn) => t.teardown(fn));

interface Got { head: OriginHead; body: Buffer; chunks: number }

/** Dispatches and gathers the body through consume(); `onHead` may act on the body first. */
function fetch(s: OriginSet, url: string, onHead?: (body: OriginBody) => void, trace?: OriginTrace): Promise<Got> {
  return new Promise((resolve, reject) => {
    s.dispatch({ method: 'GET', url, headers: {}, trace }, {
      onHead: (head, body) => {
        onHead?.(body);
        const parts: Buffer[] = [];
        body.consume({
          onData: (c) => parts.push(c),
          onEnd: () => resolve({ head, body: Buffer.concat(parts), chunks: parts.length }),
          onError: reject,
        });
      },
      onError: reject,
    });
  });
}

t.test('the head matches request(): status, lower-case names, repeated fields as arrays, address', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}/prefix/`] });
  const got = await fetch(s, '/a?b=1');
  t.equal(got.head.statusCode, 200);
  t.equal(got.body.toString(), 'GET /prefix/a?b=1');
  t.same(got.head.headers['set-cookie'], ['a=1', 'b=2']);
  t.equal(got.head.headers['x-mixed-case'], 'v');
  t.equal(got.head.address, `127.0.0.1:${origin.port}/prefix/`);
  t.equal(got.head.ip, '127.0.0.1');
  t.equal(got.head.secondary, false);
});

t.test('a refused address fails over to the next one, as request() does', async (t) => {
  const dead = await deadPort();
  const s = set({ address: [`127.0.0.1:${dead}`, `127.0.0.1:${origin.port}`] });
  const got = await fetch(s, '/over');
  t.equal(got.body.toString(), 'GET /over');
  t.equal(got.head.address, `127.0.0.1:${origin.port}`);
});

t.test('with every address refused the handler gets an OriginError', async (t) => {
  const s = set({ address: [`127.0.0.1:${await deadPort()}`] });
  const err = await fetch(s, '/none').then(() => undefined, (e: unknown) => e);
  t.ok(err instanceof OriginError);
  t.match(err, { code: 'ORIGIN_CONNECT', status: 502, attempts: 1 });
});

t.test('a paused body waits and then delivers every byte', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`] });
  let body: OriginBody | undefined;
  const got = fetch(s, '/big', (b) => { body = b; b.pause(); });
  // Resumed only once bytes reached the paused side's socket: those must not be lost.
  const flushed = (): number => (bigSocket === undefined ? 0 : bigSocket.bytesWritten - bigSocket.writableLength);
  // The origin's flush can come before the client parsed the head (a loaded machine): wait for both.
  await until(() => body !== undefined && flushed() >= 256 * 1024, 'the head taken and 256 KiB flushed towards the paused body');
  body!.resume();
  const { body: bytes } = await got;
  t.equal(bytes.length, big.length);
  t.ok(bytes.equals(big), 'byte-exact');
});

t.test('a body taken later (not inside onHead) gets what arrived meanwhile first', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`] });
  const text = await new Promise<string>((resolve, reject) => {
    s.dispatch({ method: 'GET', url: '/later', headers: {} }, {
      onHead: (_head, body) => {
        setTimeout(() => {
          let out = '';
          body.consume({ onData: (c) => { out += c.toString(); }, onEnd: () => resolve(out), onError: reject });
        }, 50);
      },
      onError: reject,
    });
  });
  t.equal(text, 'GET /later');
});

t.test('readable() streams the body; discard() ends it without an error', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`] });
  const viaStream = await new Promise<number>((resolve, reject) => {
    s.dispatch({ method: 'GET', url: '/big', headers: {} }, {
      onHead: (_h, body) => { void body.readable().toArray().then((a: Buffer[]) => resolve(Buffer.concat(a).length), reject); },
      onError: reject,
    });
  });
  t.equal(viaStream, big.length);
  await new Promise<void>((resolve, reject) => {
    s.dispatch({ method: 'GET', url: '/big', headers: {} }, { onHead: (_h, body) => { body.discard(); resolve(); }, onError: reject });
  });
  const after = await fetch(s, '/again');
  t.equal(after.body.toString(), 'GET /again', 'the set still answers after a discarded body');
});

t.test('a body cut after the head reaches the body handler as an error', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`] });
  const err = await fetch(s, '/cut').then(() => undefined, (e: unknown) => e);
  t.ok(err instanceof Error, 'onError of the body');
  t.notOk(err instanceof OriginError, 'not an origin-level failure: the head had arrived');
});

t.test('repeated fields keep every value in arrival order, names lower-cased, first-arrival field order', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`] });
  const got = await fetch(s, '/dup');
  const h = got.head.headers;
  t.same(h['x-dup'], ['1', '2', '3']);
  t.equal(h['content-type'], 'text/plain');
  t.ok(Object.hasOwn(h, '__proto__'), 'a __proto__ field is a field, not the prototype');
  t.equal(h['__proto__' as 'x'], 'p');
  t.same(Object.keys(h).filter((k) => k !== 'date' && k !== 'connection' && k !== 'keep-alive'),
    ['x-dup', 'content-type', '__proto__', 'content-length']);
  t.equal(got.body.toString(), 'ok');
});

t.test('an interim answer reaches onInformational before the head', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`] });
  const seen: string[] = [];
  await new Promise<void>((resolve, reject) => {
    s.dispatch({
      method: 'GET', url: '/hints', headers: {},
      onInformational: (status, headers) => { seen.push(`${status} ${String(headers.link)}`); },
    }, {
      onHead: (head, body) => {
        seen.push(String(head.statusCode));
        body.consume({ onData: () => undefined, onEnd: resolve, onError: reject });
      },
      onError: reject,
    });
  });
  t.same(seen, ['103 </a.css>; rel=preload', '200']);
});

t.test('the abort signal ends a paused body with the abort reason and closes the connection', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`] });
  const ac = new AbortController();
  const before = origin.seen.length;
  let failed: unknown;
  s.dispatch({ method: 'GET', url: '/slow', headers: {}, signal: ac.signal }, {
    onHead: (_h, body) => {
      body.pause();
      body.consume({ onData: () => undefined, onEnd: () => { failed = 'ended'; }, onError: (e) => { failed = e; } });
    },
    onError: (e) => { failed = e; },
  });
  await until(() => origin.seen.length > before, 'the origin saw the request');
  const reason = new Error('client gone');
  ac.abort(reason);
  await until(() => failed !== undefined, 'the body failed');
  t.equal(failed, reason);
  await until(() => slowClosed, 'the origin connection closed');
});

t.test('an abort before the connection is made goes to onError, not to another address', async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`, `127.0.0.1:${origin.port}`] });
  const ac = new AbortController();
  const before = origin.seen.length;
  const err = new Promise<unknown>((resolve) => {
    s.dispatch({ method: 'GET', url: '/x', headers: {}, signal: ac.signal }, { onHead: () => resolve('answered'), onError: resolve });
  });
  // After the dispatch call, before undici starts the request on a connection (onRequestStart).
  const reason = new Error('gone before the connection');
  ac.abort(reason);
  t.equal(await err, reason);
  t.equal(origin.seen.length, before, 'the origin saw nothing');
  t.same(s.status().InactiveIP, [], 'an abort does not count against the origin');
});

t.test("a traced exchange's origin log line has the answer's Content-Length, Cache-Control and Content-Encoding", async (t) => {
  const s = set({ address: [`127.0.0.1:${origin.port}`] });
  const trace = new OriginTrace();
  trace.note = {
    vhost: 'a.test', method: 'GET', url: '/logged', range: undefined, acceptEncoding: undefined, sessionId: 1, ctxId: 'c', bypass: '-',
    sessionType: 'cache', balance: '-',
  };
  const got = await fetch(s, '/logged', undefined, trace);
  t.equal(got.body.toString(), 'ok');
  await until(() => trace.done, 'the exchange is over');
  const v = originLine(trace, new LineClock(), Date.now()).trimEnd().split(' ');
  t.equal(v.length, ORIGIN_FIELDS.length);
  const field = (name: (typeof ORIGIN_FIELDS)[number]): string | undefined => v[ORIGIN_FIELDS.indexOf(name)];
  t.equal(field('sc-status'), '200');
  t.equal(field('sc-content-length'), '2');
  t.equal(field('sc-cachecontrol'), 'max-age=60,+public', 'spaces written as +');
  t.equal(field('sc-contentencoding'), 'gzip', 'a repeated field gives its first value');
});
