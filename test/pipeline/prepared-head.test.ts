// A full hit's head written from the stored view's prepared text (parts/prepared-head.ts) must be
// what node's writeHead writes for the same fields, byte for byte, whatever the connection and
// request; and where node would treat the fields or the response differently, node writes it.
// In-process: a node:http server with the service listeners' response class, one stored copy.
import http, { type IncomingMessage } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import t from 'tap';
import { TxResponse } from '../../lib/pipeline/parts/tx-response.js';
import { TransactionRecord } from '../../lib/pipeline/parts/transaction.js';
import { fullAnswerHead, viewOf } from '../../lib/pipeline/parts/stored-view.js';
import { writePreparedHead } from '../../lib/pipeline/parts/prepared-head.js';
import type { CacheEntryMeta, StoredHeaders } from '../../lib/cache/store.js';

const BODY = Buffer.from('y'.repeat(100));

function entry(headers: StoredHeaders, status = 200): CacheEntryMeta {
  const now = Date.now();
  return {
    key: { vhost: 'h', url: '/' }, variantKey: '', vary: [], status, headers, requestTime: now, cachedAt: now,
    staleAt: now + 60_000, deleteAt: now + 60_000, size: status === 204 ? 0 : BODY.length,
  };
}

const FIELDS: StoredHeaders = {
  'content-type': 'text/plain', 'content-length': '100', 'cache-control': 'max-age=60', date: 'Sun, 29 Nov 2026 10:00:00 GMT', etag: '"e1"',
};
const copies: Record<string, CacheEntryMeta> = {
  plain: entry(FIELDS),
  cookies: entry({ ...FIELDS, 'set-cookie': ['a=1', 'b=2'] }),
  undated: entry({ 'content-type': 'text/plain', 'content-length': '100' }),
  empty: entry({ date: FIELDS.date as string }, 204),
};

/** How the answer was written: 'prepared' or 'node' (the handler's own log of each request). */
const how: string[] = [];

const server = http.createServer({ ServerResponse: TxResponse, keepAliveTimeout: 5000 }, (req: IncomingMessage, res) => {
  const url = new URL(req.url!, 'http://x');
  const copy = copies[url.searchParams.get('copy') ?? 'plain']!;
  const tx = new TransactionRecord(req, res, 1);
  (res as TxResponse).tx = tx;
  if (url.searchParams.has('set')) res.setHeader('x-set-before', '1');
  const view = viewOf(copy);
  const fields = fullAnswerHead(view, Number(url.searchParams.get('age') ?? 7), url.searchParams.get('result') ?? 'TCP_HIT',
    url.searchParams.get('status') ?? 'svc; hit; ttl=60');
  if (url.pathname === '/prepared' && writePreparedHead(res, copy.status, view, fields, copy.size)) how.push('prepared');
  else { how.push('node'); res.writeHead(copy.status, fields); }
  if (req.method === 'HEAD' || copy.size === 0) res.end();
  else res.end(BODY);
});
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
const port = (server.address() as AddressInfo).port;
t.teardown(() => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }));

/** One request on a fresh connection: the head and as much body as it announces (none for HEAD). */
function exchange(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let got = Buffer.alloc(0);
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`no whole answer: ${got.toString('latin1')}`)); }, 5000);
    const done = (): void => { clearTimeout(timer); socket.destroy(); resolve(got.toString('latin1')); };
    socket.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      const text = got.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = request.startsWith('HEAD') ? 0 : Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (got.length >= end + 4 + length) done();
    });
    socket.on('close', () => { if (got.length > 0) done(); });
    socket.on('error', reject);
  });
}

const requests: Record<string, string> = {
  'HTTP/1.1 keep-alive': 'GET @ HTTP/1.1\r\nHost: h\r\n\r\n',
  'HTTP/1.1 Connection: close': 'GET @ HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
  'HTTP/1.0': 'GET @ HTTP/1.0\r\n\r\n',
  'HTTP/1.0 keep-alive': 'GET @ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n',
  HEAD: 'HEAD @ HTTP/1.1\r\nHost: h\r\n\r\n',
};

t.test('a full hit written from the prepared text is byte for byte what node writes', async (t) => {
  for (const [name, request] of Object.entries(requests)) {
    how.length = 0;
    const prepared = await exchange(request.replace('@', '/prepared'));
    const byNode = await exchange(request.replace('@', '/node'));
    t.same(how, ['prepared', 'node'], `${name}: the prepared text was used`);
    t.equal(prepared, byNode, name);
    t.match(prepared, /\r\nage: 7\r\nx-cache: TCP_HIT\r\ncache-status: svc; hit; ttl=60\r\n/, `${name}: this answer's fields`);
  }
});

t.test('node writes the head where it treats the fields or the response differently', async (t) => {
  const cases: [string, string][] = [
    ['a field with a list of values', '?copy=cookies'], ['a copy without Date (node adds one)', '?copy=undated'],
    ['a status without a body', '?copy=empty'], ['fields set on the response before', '?set=1'],
  ];
  for (const [name, query] of cases) {
    how.length = 0;
    const prepared = await exchange(`GET /prepared${query} HTTP/1.1\r\nHost: h\r\n\r\n`);
    t.same(how, ['node'], name);
    t.match(prepared, /^HTTP\/1\.1 20[04] /, `${name}: answered`);
  }
  const both = await exchange('GET /prepared?copy=cookies HTTP/1.1\r\nHost: h\r\n\r\n');
  t.match(both, /\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n/, 'each value of a list on its own line');
  t.match(await exchange('GET /prepared?set=1 HTTP/1.1\r\nHost: h\r\n\r\n'), /\r\nx-set-before: 1\r\n/, 'the field set before is in the head');
});

t.test('answers of one copy in a row each say their own Age, cache result and Cache-Status', async (t) => {
  // The last head written is kept for the next answer of the same copy: it must not stand in for
  // an answer whose own fields differ.
  const answers = [['7', 'TCP_HIT', 'svc; hit; ttl=60'], ['7', 'TCP_HIT', 'svc; hit; ttl=60'], ['8', 'TCP_HIT', 'svc; hit; ttl=60'],
    ['8', 'TCP_REFRESH_HIT', 'svc; hit; ttl=60'], ['8', 'TCP_REFRESH_HIT', 'svc; hit; ttl=59']];
  for (const [age, result, status] of answers) {
    const query = `?age=${age}&result=${result}&status=${encodeURIComponent(status!)}`;
    how.length = 0;
    const prepared = await exchange(`GET /prepared${query} HTTP/1.1\r\nHost: h\r\n\r\n`);
    const byNode = await exchange(`GET /node${query} HTTP/1.1\r\nHost: h\r\n\r\n`);
    t.same(how, ['prepared', 'node'], `age ${age}, ${result}, ${status}: the prepared text was used`);
    t.equal(prepared, byNode, `age ${age}, ${result}, ${status}: what node writes`);
    t.match(prepared, `\r\nage: ${age}\r\nx-cache: ${result}\r\ncache-status: ${status}\r\n`, `age ${age}, ${result}, ${status}: its own fields`);
  }
  // Connection: close after keep-alive answers of the same copy and values.
  const closing = await exchange('GET /prepared?age=8 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
  t.match(closing, /\r\nConnection: close\r\n\r\n/, 'an answer that closes its connection says so');
});
