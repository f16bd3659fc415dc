// Black-box: the pipeline's answers as HTTP/2 clients get them. Streams of one connection share
// an origin fetch, large bodies keep to flow control, a stream the client resets mid-body leaves
// the others alone, and HEAD, conditional, multipart range and slow-upload answers are those of
// HTTP/1.1, each on its own stream.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { curl, makeCert, tlsNode } from './helpers.js';
import { waitFor } from '../../helpers/wait.js';
import { FRAME, RawH2, goawayCode } from './h2-frames.js';

const HOST = 'p2.test';
const recordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-h2p-records-'));
t.teardown(() => fs.rmSync(recordDir, { recursive: true, force: true }));
const n = await tlsNode(t, [{ name: HOST, https: [{ cert: 'p.crt', key: 'p.key' }] }], (dir) => makeCert(dir, 'p', HOST),
  { functions: { network: { http: { frontEnd: { bodyMinRate: { bytesPerSecond: 100_000, period: 1 } } } } } }, { SVC_TEST_RECORD_DIR: recordDir });
const caFile = path.join(n.dir, 'p.crt');
const ca = fs.readFileSync(caFile);

const big = Buffer.alloc(3 * 1024 * 1024);
for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

n.origin.on('/big', (_q, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': big.length, 'cache-control': 'max-age=600', etag: '"big1"' });
  res.end(big);
});
// A chunked answer whose origin goes away in the middle.
n.origin.on('/broken', (_q, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
  res.write('the first part, ');
  setImmediate(() => res.socket?.destroy());
});
let release: () => void = () => undefined;
// An origin that answers only when the test lets it: the client is gone by then.
let releaseSlow: () => void = () => undefined;
n.origin.on('/slow', (_q, res) => {
  releaseSlow = () => { res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2, 'cache-control': 'no-store' }); res.end('ok'); };
});
n.origin.on('/shared', (_q, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': big.length, 'cache-control': 'max-age=600' });
  res.write(big.subarray(0, 1024));
  release = () => res.end(big.subarray(1024));
});

async function connect(): Promise<http2.ClientHttp2Session> {
  const s = http2.connect(`https://127.0.0.1:${n.tlsPort}`, { ca, servername: HOST });
  s.on('error', () => undefined);
  await new Promise((r) => s.once('remoteSettings', r));
  return s;
}

interface Answer { status: number; headers: http2.IncomingHttpHeaders; body: Buffer; rst: number | undefined }
function request(s: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, o: { body?: Buffer; endBody?: boolean; onStream?: (r: http2.ClientHttp2Stream) => void } = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const req = s.request({ ':authority': HOST, ...headers }, { endStream: o.body === undefined });
    let status = 0;
    let got: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => { got = h; status = Number(h[':status']); });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('close', () => resolve({ status, headers: got, body: Buffer.concat(chunks), rst: req.rstCode }));
    if (o.body !== undefined) {
      if (o.endBody === false) req.write(o.body);
      else req.end(o.body);
    }
    o.onStream?.(req);
  });
}

function records(): Array<{ urlReceived: string; status: number; completed: boolean; protocol: string; requestBodyBytes: number }> {
  return fs.readdirSync(recordDir).flatMap((f) => fs.readFileSync(path.join(recordDir, f), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)));
}

t.test('streams of one connection asking for the same uncached object share one origin fetch and all get it whole', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const first = request(s, { ':path': '/shared' });
  await waitFor(() => n.origin.count('/shared') === 1);
  const others = Array.from({ length: 9 }, () => request(s, { ':path': '/shared' }));
  release();
  const all = await Promise.all([first, ...others]);
  for (const a of all) {
    t.equal(a.status, 200);
    t.equal(sha(a.body), sha(big));
  }
  t.equal(n.origin.count('/shared'), 1, 'one origin request');
});

t.test('a 3 MB object goes out whole under HTTP/2 flow control, as a miss and as a hit', async (t) => {
  for (const want of ['TCP_MISS', 'TCP_HIT']) {
    const out = path.join(n.dir, `big-${want}`);
    const r = await curl(n.tlsPort, HOST, '/big', caFile, ['--http2', '-o', out]);
    t.equal(r.code, 0, r.stderr);
    // -i (the helper's) puts the head in the file too.
    const file = fs.readFileSync(out);
    const head = file.subarray(0, file.indexOf('\r\n\r\n')).toString('latin1');
    t.match(head, /^HTTP\/2 200/);
    t.match(head, new RegExp(`x-cache: ${want}`));
    t.equal(sha(file.subarray(head.length + 4)), sha(big));
  }
});

t.test('a stream the client resets in the middle of a body leaves the connection serving; its record is incomplete', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const cut = await request(s, { ':path': '/big?cut' }, {
    onStream: (r) => r.once('data', () => r.close(http2.constants.NGHTTP2_CANCEL)),
  });
  t.ok(cut.body.length < big.length, 'the client stopped early');
  const next = await request(s, { ':path': '/big' });
  t.equal(next.status, 200);
  t.equal(next.body.length, big.length);
  await waitFor(() => records().some((r) => r.urlReceived === '/big?cut'));
  const rec = records().find((r) => r.urlReceived === '/big?cut');
  t.equal(rec?.completed, false);
  t.equal(rec?.protocol, 'http2');
});

t.test('a HEAD stream the client resets before its answer still ends its transaction: its record says status 0, incomplete', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const seen = n.origin.count('/slow');
  const r = await request(s, { ':path': '/slow?head-reset', ':method': 'HEAD' }, {
    onStream: (req) => { void waitFor(() => n.origin.count('/slow') > seen).then(() => req.close(http2.constants.NGHTTP2_CANCEL)); },
  });
  t.equal(r.status, 0, 'no answer reached the client');
  await waitFor(() => records().some((x) => x.urlReceived === '/slow?head-reset'));
  const rec = records().find((x) => x.urlReceived === '/slow?head-reset');
  t.equal(rec?.status, 0);
  t.equal(rec?.completed, false);
  releaseSlow();
  const next = await request(s, { ':path': '/big', ':method': 'HEAD' });
  t.equal(next.status, 200, 'the connection goes on');
});

t.test('Expect: 100-continue over HTTP/2 gets a 100 before the answer; any other expectation gets 417', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  let continued = false;
  const body = Buffer.from('a body after the 100');
  const r = await request(s, { ':path': '/upload-expect', ':method': 'POST', expect: '100-continue' }, {
    body, onStream: (req) => req.once('continue', () => { continued = true; }),
  });
  t.ok(continued, 'the 100 arrived');
  t.equal(r.status, 200);
  t.same(n.origin.seen.find((q) => q.url === '/upload-expect')?.body, body, 'the origin got the body whole');
  const other = await request(s, { ':path': '/upload-expect', ':method': 'POST', expect: 'something-else' }, { body });
  t.equal(other.status, 417);
});

t.test('a request body larger than bufferBodyUpTo streams from the HTTP/2 stream to the origin whole, counted in the record', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const up = big.subarray(0, 300 * 1024);
  const r = await request(s, { ':path': '/upload-large', ':method': 'POST', 'content-type': 'application/octet-stream' }, { body: up });
  t.equal(r.status, 200);
  const seen = n.origin.seen.find((q) => q.url === '/upload-large');
  t.equal(seen?.body.length, up.length);
  t.equal(sha(seen?.body ?? Buffer.alloc(0)), sha(up), 'the bytes the client sent');
  await waitFor(() => records().some((x) => x.urlReceived === '/upload-large'));
  t.equal(records().find((x) => x.urlReceived === '/upload-large')?.requestBodyBytes, up.length);
});

t.test('HEAD over HTTP/2 gets the head and no body', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const r = await request(s, { ':path': '/big', ':method': 'HEAD' });
  t.equal(r.status, 200);
  t.equal(r.headers['content-length'], String(big.length));
  t.equal(r.body.length, 0);
});

t.test('a conditional request over HTTP/2 is answered 304', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const r = await request(s, { ':path': '/big', 'if-none-match': '"big1"' });
  t.equal(r.status, 304);
  t.equal(r.body.length, 0);
});

t.test('a multipart Range request over HTTP/2 is answered 206 multipart/byteranges', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const r = await request(s, { ':path': '/big', range: 'bytes=0-9,100-109' });
  t.equal(r.status, 206);
  t.match(String(r.headers['content-type']), /^multipart\/byteranges; boundary=/);
  t.equal(r.body.length, Number(r.headers['content-length']));
  t.match(r.body.toString('latin1'), /Content-Range: bytes 100-109\/3145728/i);
});

t.test('an upload slower than bodyMinRate gets 408 on its stream; the connection goes on', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const slow = await request(s, { ':path': '/slow-upload', ':method': 'POST' }, { body: Buffer.from('0123456789'), endBody: false });
  t.equal(slow.status, 408);
  const next = await request(s, { ':path': '/big' });
  t.equal(next.status, 200);
});

t.test('an answer the origin breaks off is reset with an error on its stream, never ended as if complete', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const r = await request(s, { ':path': '/broken' });
  t.equal(r.status, 200);
  t.equal(r.body.toString(), 'the first part, ');
  t.equal(r.rst, http2.constants.NGHTTP2_INTERNAL_ERROR);
  const next = await request(s, { ':path': '/big' });
  t.equal(next.status, 200, 'the connection goes on');
});

t.test('CONNECT over HTTP/2 is refused with 405', async (t) => {
  const s = await connect();
  t.teardown(() => s.close());
  const r = await request(s, { ':method': 'CONNECT', ':authority': 'elsewhere.test:443' });
  t.equal(r.status, 405);
  t.match(String(r.headers.allow), /GET/);
});

t.test('with http2.enable false (after a reload) the TLS port offers HTTP/1.1 only', async (t) => {
  const setting = JSON.parse(fs.readFileSync(n.server.settingPath, 'utf8')) as { functions?: Record<string, unknown> };
  setting.functions = { network: { http: { frontEnd: { bodyMinRate: { bytesPerSecond: 100_000, period: 1 }, http2: { enable: false } } } } };
  const before = n.server.logs.filter((l) => l.includes('setting reloaded')).length;
  fs.writeFileSync(n.server.settingPath, JSON.stringify(setting));
  n.server.signal('SIGHUP');
  await waitFor(() => n.server.logs.filter((l) => l.includes('setting reloaded')).length > before);
  const r = await curl(n.tlsPort, HOST, '/big', caFile, ['--http2', '-o', '/dev/null', '-w', '%{http_version}']);
  t.equal(r.stdout, '1.1');
});

t.test('HTTP/2 over TLS 1.1 (on a port that enables it) gets GOAWAY INADEQUATE_SECURITY', async (t) => {
  const old = await tlsNode(t, [{ name: 'old.test', https: [{ cert: 'o.crt', key: 'o.key' }], httpsOptions: { enableTls11: true } }],
    (dir) => makeCert(dir, 'o', 'old.test'));
  const c = await RawH2.connect(old.tlsPort, {
    tls: { servername: 'old.test', ca: fs.readFileSync(path.join(old.dir, 'o.crt')), options: { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' } },
  });
  t.teardown(() => c.close());
  const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY);
  t.equal(goaway === undefined ? -1 : goawayCode(goaway), http2.constants.NGHTTP2_INADEQUATE_SECURITY);
  t.ok(await c.waitClosed(), 'the connection is closed');
});
