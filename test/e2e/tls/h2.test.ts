// Black-box: HTTP/2 on a TLS service port, with real clients (curl, nghttp, node's http2 client)
// and a raw-frame client for what a well-behaved client never does. The same pipeline answers:
// cache hits, ranges, uploads, records with protocol http2; hop-by-hop fields never appear; the
// protocol limits of the setting are what a client negotiates, and abusive clients lose their
// connection while the worker goes on serving.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { curl, makeCert, run, tlsNode } from './helpers.js';
import { ERR, FLAG, FRAME, RawH2, frame, getHeaders, goawayCode, rstStream } from './h2-frames.js';
import { primaryPids } from '../../helpers/server.js';
import { waitFor } from '../../helpers/wait.js';

const HOST = 'h2.test';
const recordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-h2-records-'));
t.teardown(() => fs.rmSync(recordDir, { recursive: true, force: true }));

const http2Limits = { maxConcurrentStreams: 64, initialWindowSize: 1048576, maxHeaderListSize: 8192, settingsTimeout: 1 };
const n = await tlsNode(t, [{ name: HOST, https: [{ cert: 'h2.crt', key: 'h2.key' }] }], (dir) => makeCert(dir, 'h2', HOST),
  { functions: { network: { http: { frontEnd: { keepAliveTimeout: 3, http2: http2Limits } } } } }, { SVC_TEST_RECORD_DIR: recordDir });
const caFile = path.join(n.dir, 'h2.crt');
const ca = fs.readFileSync(caFile);

const body1000 = Buffer.alloc(1000, 'a');
n.origin.on('/obj', (_q, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=600', 'content-length': body1000.length });
  res.end(body1000);
});
// Connection-specific fields as an HTTP/1.1 origin sends them, a chunked body included.
n.origin.on('/hop', (_q, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', connection: 'x-private', 'x-private': '1', 'keep-alive': 'timeout=5', upgrade: 'foo', 'cache-control': 'no-store' });
  res.write('chunk one, ');
  res.end('chunk two');
});
n.origin.on('/upload', (q, res) => {
  const text = `got ${q.body.length}`;
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': text.length, 'cache-control': 'no-store' });
  res.end(text);
});

interface Rec { urlReceived: string; method: string; protocol: string; httpVersion: string; status: number; completed: boolean; cacheResult: string;
  requestBodyBytes: number; responseHeadBytes: number; responseBodyBytes: number }
function records(): Rec[] {
  const out: Rec[] = [];
  for (const f of fs.readdirSync(recordDir)) {
    for (const line of fs.readFileSync(path.join(recordDir, f), 'utf8').split('\n')) if (line !== '') out.push(JSON.parse(line) as Rec);
  }
  return out;
}
async function recordOf(pred: (r: Rec) => boolean): Promise<Rec | undefined> {
  await waitFor(() => records().some(pred));
  return records().find(pred);
}

function workerPids(): string {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(primaryPids(n.server)[0])]).toString().trim();
  } catch { return ''; }
}

/**
 * node's http2 client on the TLS port, trusting the test certificate, once it has the server's
 * SETTINGS (and acknowledged them: the server applies its limits from then on, RFC 9113 6.5.3).
 */
async function connect(): Promise<http2.ClientHttp2Session> {
  const s = http2.connect(`https://127.0.0.1:${n.tlsPort}`, { ca, servername: HOST });
  s.on('error', () => undefined);
  await new Promise((r) => s.once('remoteSettings', r));
  return s;
}

interface Answer { status: number; headers: http2.IncomingHttpHeaders; body: Buffer; rst: number | undefined }
function h2request(s: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const req = s.request({ ':authority': HOST, ...headers }, { endStream: body === undefined });
    let status = 0;
    let got: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => { got = h; status = Number(h[':status']); });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('close', () => resolve({ status, headers: got, body: Buffer.concat(chunks), rst: req.rstCode }));
    if (body !== undefined) req.end(body);
  });
}

const HOP_BY_HOP = /^(connection|keep-alive|proxy-connection|transfer-encoding|upgrade|te):/im;

t.test('curl --http2 gets HTTP/2 over TLS: a miss, then a cached hit with x-cache and age', async (t) => {
  const first = await curl(n.tlsPort, HOST, '/obj', caFile, ['--http2']);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /^HTTP\/2 200/);
  t.match(first.stdout, /\r\nx-cache: TCP_MISS\r\n/);
  const second = await curl(n.tlsPort, HOST, '/obj', caFile, ['--http2']);
  t.match(second.stdout, /^HTTP\/2 200/);
  t.match(second.stdout, /\r\nx-cache: TCP_HIT\r\n/);
  t.match(second.stdout, /\r\nage: \d+\r\n/);
  t.ok(second.stdout.endsWith(body1000.toString()), 'the whole body');
  t.equal(n.origin.count('/obj'), 1, 'the origin saw one request');
});

t.test('a Range request over HTTP/2 is answered 206 with the part', async (t) => {
  const r = await curl(n.tlsPort, HOST, '/obj', caFile, ['--http2', '-r', '10-19']);
  t.match(r.stdout, /^HTTP\/2 206/);
  t.match(r.stdout, /\r\ncontent-range: bytes 10-19\/1000\r\n/);
  t.match(r.stdout, /\r\ncontent-length: 10\r\n/);
  t.ok(r.stdout.endsWith('a'.repeat(10)) && !r.stdout.endsWith('a'.repeat(11)));
});

t.test('hop-by-hop fields never appear in HTTP/2 answers, from the origin or from the server\'s own error answers', async (t) => {
  const r = await curl(n.tlsPort, HOST, '/hop', caFile, ['--http2']);
  t.match(r.stdout, /^HTTP\/2 200/);
  const head = r.stdout.slice(0, r.stdout.indexOf('\r\n\r\n'));
  t.notMatch(head, HOP_BY_HOP);
  t.notMatch(head, /x-private/, 'nor a field the origin\'s Connection named');
  t.ok(r.stdout.endsWith('chunk one, chunk two'), 'the chunked body arrives whole');
  // A GET with content is refused (400, which HTTP/1 answers with Connection: close).
  const s = await connect();
  t.teardown(() => s.close());
  const bad = await h2request(s, { ':path': '/obj', ':method': 'GET' }, Buffer.from('body'));
  t.equal(bad.status, 400);
  t.equal(bad.headers.connection, undefined);
  const next = await h2request(s, { ':path': '/obj' });
  t.equal(next.status, 200, 'the connection goes on serving');
  t.notOk(n.server.logs.some((l) => /UnsupportedWarning|connection header/i.test(l)), 'node was never handed a connection field');
  // curl sees the whole answer: the stream ends before it is reset (an early reset loses it).
  const withBody = await curl(n.tlsPort, HOST, '/obj', caFile, ['--http2', '-X', 'GET', '-d', 'some body']);
  t.equal(withBody.code, 0, withBody.stderr);
  t.match(withBody.stdout, /^HTTP\/2 400[^]*\r\n\r\n400 Bad Request\n$/);
});

t.test('nghttp -v negotiates h2 and sees the SETTINGS of the setting and an answer', async (t) => {
  const r = await run('nghttp', ['-nv', '--timeout=10', `https://127.0.0.1:${n.tlsPort}/obj`, '-H', `:authority: ${HOST}`]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /The negotiated protocol: h2/);
  t.match(r.stdout, /SETTINGS_MAX_CONCURRENT_STREAMS\(0x03\):64/);
  t.match(r.stdout, /SETTINGS_INITIAL_WINDOW_SIZE\(0x04\):1048576/);
  t.match(r.stdout, /SETTINGS_MAX_HEADER_LIST_SIZE\(0x06\):8192/);
  t.match(r.stdout, /recv \(stream_id=\d+\) :status: 200/);
  t.match(r.stdout, /recv \(stream_id=\d+\) x-cache: TCP_HIT/);
});

t.test('a client offering no ALPN, or only http/1.1, gets HTTP/1.1', async (t) => {
  const h1 = await curl(n.tlsPort, HOST, '/obj', caFile, ['--http1.1']);
  t.match(h1.stdout, /^HTTP\/1\.1 200/);
  const none = await curl(n.tlsPort, HOST, '/obj', caFile, ['--no-alpn']);
  t.match(none.stdout, /^HTTP\/1\.1 200/);
  t.match(none.stdout, /\r\nx-cache: TCP_HIT\r\n/i);
});

t.test('a request body over HTTP/2 reaches the origin whole and is counted in the record', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const up = Buffer.alloc(5000, 'u');
  const r = await h2request(s, { ':path': '/upload', ':method': 'POST', 'content-type': 'text/plain' }, up);
  t.equal(r.status, 200);
  t.equal(r.body.toString(), 'got 5000');
  const rec = await recordOf((x) => x.urlReceived === '/upload');
  t.equal(rec?.requestBodyBytes, 5000);
});

t.test('the record of an HTTP/2 transaction says http2, with the stream\'s own bytes', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const r = await h2request(s, { ':path': '/obj?rec' });
  t.equal(r.status, 200);
  const rec = await recordOf((x) => x.urlReceived === '/obj?rec');
  t.equal(rec?.protocol, 'http2');
  t.equal(rec?.httpVersion, '2.0');
  t.equal(rec?.status, 200);
  t.equal(rec?.completed, true);
  t.equal(rec?.responseBodyBytes, 1000);
  t.ok((rec?.responseHeadBytes ?? 0) > 50, 'the head, measured as text');
  const h1 = await recordOf((x) => x.urlReceived === '/obj' && x.protocol === 'https');
  t.ok(h1 !== undefined, 'HTTP/1.1 over TLS stays https');
});

t.test('a Host field that names another host than :authority is refused with 400', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const r = await h2request(s, { ':path': '/obj', host: 'other.test' });
  t.equal(r.status, 400);
});

t.test('a header list above maxHeaderListSize resets that stream only', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const big = await h2request(s, { ':path': '/obj', 'x-big': 'b'.repeat(9000) });
  t.equal(big.status, 0, 'no answer');
  t.not(big.rst, 0, 'the stream was reset');
  const next = await h2request(s, { ':path': '/obj' });
  t.equal(next.status, 200, 'the connection serves the next request');
});

t.test('rapid reset: a client that resets streams as fast as it opens them gets GOAWAY and is closed; the worker goes on serving', async (t) => {
  const before = workerPids();
  const c = await RawH2.connect(n.tlsPort, { tls: { servername: HOST, ca } });
  t.teardown(() => c.close());
  await c.waitFor((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0);
  const burst: Buffer[] = [];
  for (let id = 1; id < 2 * 20_000; id += 2) {
    burst.push(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, id, getHeaders(HOST, '/obj')), rstStream(id, ERR.CANCEL));
  }
  c.send(Buffer.concat(burst));
  const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY, 20_000);
  t.ok(goaway !== undefined, 'GOAWAY received');
  // nghttp2's reset budget (lib/worker/h2-server.ts RESET_BUDGET_MAX) closes it in the same read.
  t.equal(goaway === undefined ? -1 : goawayCode(goaway), ERR.INTERNAL_ERROR, 'INTERNAL_ERROR (nghttp2\'s code for a flood)');
  t.ok(await c.waitClosed(), 'the connection is closed');
  const after = await curl(n.tlsPort, HOST, '/obj', caFile, ['--http2']);
  t.match(after.stdout, /^HTTP\/2 200/);
  t.equal(workerPids(), before, 'the same worker');
});

t.test('a client that never acknowledges the SETTINGS gets GOAWAY SETTINGS_TIMEOUT', async (t) => {
  const c = await RawH2.connect(n.tlsPort, { tls: { servername: HOST, ca }, autoAck: false });
  t.teardown(() => c.close());
  const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY);
  t.equal(goaway === undefined ? -1 : goawayCode(goaway), ERR.SETTINGS_TIMEOUT);
  t.ok(await c.waitClosed(), 'the connection is closed');
});

t.test('an idle HTTP/2 connection is closed with GOAWAY after keepAliveTimeout', async (t) => {
  const c = await RawH2.connect(n.tlsPort, { tls: { servername: HOST, ca } });
  t.teardown(() => c.close());
  c.send(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, 1, getHeaders(HOST, '/obj')));
  t.ok(await c.waitFor((f) => f.type === FRAME.DATA && f.stream === 1 && (f.flags & FLAG.END_STREAM) !== 0), 'the answer');
  const started = Date.now();
  const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY);
  t.equal(goaway === undefined ? -1 : goawayCode(goaway), ERR.NO_ERROR);
  t.ok(Date.now() - started >= 2000, 'not before the timeout (3 s)');
  t.ok(await c.waitClosed(), 'the connection is closed');
});

t.test('an HTTP/2 connection whose stream waits on the origin past keepAliveTimeout stays open and gets the answer', async (t) => {
  // The origin answers 3.5 s after it was asked: past keepAliveTimeout (3 s), with the stream open.
  n.origin.on('/held', (_q, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 4, 'cache-control': 'no-store' });
      res.end('held');
    }, 3500);
  });
  const c = await RawH2.connect(n.tlsPort, { tls: { servername: HOST, ca } });
  t.teardown(() => c.close());
  c.send(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, 1, getHeaders(HOST, '/held')));
  const end = await c.waitFor((f) => f.type === FRAME.DATA && f.stream === 1 && (f.flags & FLAG.END_STREAM) !== 0);
  t.ok(end, 'the answer');
  t.equal(Buffer.concat(c.frames.filter((f) => f.type === FRAME.DATA && f.stream === 1).map((f) => f.payload)).toString(), 'held');
  t.notOk(c.frames.some((f) => f.type === FRAME.GOAWAY), 'no GOAWAY while the stream was open');
});

// Last: it stops the node.
t.test('stopping the node sends GOAWAY; a request in flight on the connection still completes', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  let arrived = false;
  n.origin.on('/slow', (_q, res) => {
    arrived = true;
    void held.then(() => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 4, 'cache-control': 'no-store' });
      res.end('done');
    });
  });
  const s = await connect();
  t.teardown(() => s.close());
  const goaway = new Promise<number>((r) => s.once('goaway', (code: number) => r(code)));
  const answer = h2request(s, { ':path': '/slow' });
  await waitFor(() => arrived);
  n.server.signal('SIGTERM');
  t.equal(await goaway, ERR.NO_ERROR, 'GOAWAY without an error');
  release();
  const a = await answer;
  t.equal(a.status, 200);
  t.equal(a.body.toString(), 'done');
  t.equal(await n.server.exited, 0, 'the node stopped cleanly');
});
