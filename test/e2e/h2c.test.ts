// Black-box: cleartext HTTP/2 with prior knowledge (frontEnd.http2.cleartext) on a plain service
// port, beside HTTP/1.x on the same port; a reload switches it off and on with the port open.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { TestOrigin } from '../helpers/origin.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest, splitResponses } from '../helpers/raw-client.js';
import { baseSetting, startServer, writeSetting } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { ERR, FLAG, FRAME, RawH2, frame, getHeaders, goawayCode, literalField, rstStream } from './tls/h2-frames.js';

const HOST = 'c.test';
const recordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-h2c-records-'));
const origin = await new TestOrigin().start();
origin.on('/obj', (_q, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=600', 'content-length': 5 });
  res.end('hello');
});
const port = await freePort();
const hosts = [{ name: HOST, listen: `127.0.0.1:${port}`, origin: { address: [`127.0.0.1:${origin.port}`] } }];
// The access log (custom form: protocol and %u) of every transaction, loopback clients included.
const accessLog = { meta: { dir: 'logs' }, access: { enable: true, loopback: true, form: 'custom', format: '%H %u' } };
const h2cOn = (on: boolean): Record<string, unknown> => ({
  functions: {
    network: { http: { frontEnd: { http2: { cleartext: on }, answerFields: { requestId: { enable: true, name: 'x-request-id' }, nodeName: { enable: true, value: 'edge-h2c' } } } } },
    operations: { log: accessLog },
  },
});
const server = await startServer(hosts, { extra: h2cOn(true), env: { SVC_TEST_RECORD_DIR: recordDir } });
t.teardown(async () => { await server.stop(); await origin.stop(); fs.rmSync(recordDir, { recursive: true, force: true }); });

function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('curl', ['-sS', '-i', '--max-time', '10', ...args], (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end();
  });
}

/**
 * Rewrites setting.json and reloads (SIGHUP). A reload ends by rewriting setting.json as the
 * running setting, after its log line: the next file is written only once the API shows this
 * one as running, or that late rewrite would put the previous setting back.
 */
async function reload(cleartext: boolean): Promise<void> {
  const before = server.logs.filter((l) => l.includes('setting reloaded')).length;
  await writeSetting(server.dir, baseSetting(hosts, server.basePort, { extra: h2cOn(cleartext) }, server.apiPort));
  const text = fs.readFileSync(server.settingPath, 'utf8');
  server.signal('SIGHUP');
  await waitFor(() => server.logs.filter((l) => l.includes('setting reloaded')).length > before);
  await waitFor(async () => (await (await fetch(`http://127.0.0.1:${server.apiPort}/setting/setting.json`)).text()) === text);
}

t.test('curl --http2-prior-knowledge gets HTTP/2 on a plain port: a miss, then a cached hit', async (t) => {
  const url = `http://${HOST}:${port}/obj`;
  const resolve = ['--resolve', `${HOST}:${port}:127.0.0.1`];
  const first = await curl(['--http2-prior-knowledge', ...resolve, url]);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /^HTTP\/2 200/);
  const second = await curl(['--http2-prior-knowledge', ...resolve, url]);
  t.match(second.stdout, /^HTTP\/2 200/);
  t.match(second.stdout, /\r\nx-cache: TCP_HIT\r\n/);
  t.ok(second.stdout.endsWith('\r\n\r\nhello'));
  t.equal(origin.count('/obj'), 1);
});

t.test('HTTP/1.x on the same port is served as before, pipelined requests and bodies included', async (t) => {
  const one = await curl(['--http1.1', '-H', `Host: ${HOST}`, `http://127.0.0.1:${port}/obj`]);
  t.match(one.stdout, /^HTTP\/1\.1 200/);
  const pipelined = await rawRequest(port, `GET /obj HTTP/1.1\r\nHost: ${HOST}\r\n\r\nPOST /post HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 3\r\n\r\nabcGET /obj HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`);
  const answers = splitResponses(pipelined.text);
  t.same(answers.map((a) => a.status), [200, 200, 200]);
  t.equal(answers[1]?.body, 'origin:POST /post');
  t.equal(origin.seen.find((s) => s.url === '/post')?.body.toString(), 'abc');
  // An Upgrade to h2c is not taken up: answered as HTTP/1.1.
  const upgrade = await curl(['--http2', '-H', `Host: ${HOST}`, `http://127.0.0.1:${port}/obj`]);
  t.match(upgrade.stdout, /^HTTP\/1\.1 200/);
});

t.test('an HTTP/0.9 request line is answered 400 at once and the connection closed, as on a port without h2c', async (t) => {
  // The head timeout is 10 s: an answer within this wait can only be the immediate refusal.
  const r = await rawRequest(port, 'GET /v09\r\n', { timeoutMs: 5000 });
  t.equal(r.status, 400);
  t.ok(r.closed, 'the connection is closed');
  t.equal(origin.count('/v09'), 0);
});

t.test('a request line with more than one space between its parts is answered 400 at once, as on a port without h2c', async (t) => {
  const r = await rawRequest(port, `GET  /sp HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
  t.equal(r.status, 400);
  t.ok(r.closed, 'the connection is closed');
  t.equal(origin.count('/sp'), 0);
});

t.test('the record of an h2c transaction says http2', async (t) => {
  const s = http2.connect(`http://127.0.0.1:${port}`);
  s.on('error', () => undefined);
  t.teardown(() => s.close());
  const status = await new Promise<number>((resolve) => {
    const r = s.request({ ':path': '/obj?h2c', ':authority': HOST });
    let st = 0;
    r.on('response', (h) => { st = Number(h[':status']); });
    r.resume();
    r.on('close', () => resolve(st));
  });
  t.equal(status, 200);
  const read = (): Array<{ urlReceived: string; protocol: string }> => fs.readdirSync(recordDir)
    .flatMap((f) => fs.readFileSync(path.join(recordDir, f), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)));
  await waitFor(() => read().some((r) => r.urlReceived === '/obj?h2c'));
  t.equal(read().find((r) => r.urlReceived === '/obj?h2c')?.protocol, 'http2');
});

t.test('an h2c answer carries the answerFields: the request id of its record and the node name', async (t) => {
  const s = http2.connect(`http://127.0.0.1:${port}`);
  s.on('error', () => undefined);
  t.teardown(() => s.close());
  const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => {
    const r = s.request({ ':path': '/obj?fields', ':authority': HOST });
    let got: http2.IncomingHttpHeaders = {};
    r.on('response', (h) => { got = h; });
    r.resume();
    r.on('close', () => resolve(got));
  });
  t.equal(headers[':status'], 200);
  t.equal(headers['x-svc-node'], 'edge-h2c');
  const read = (): Array<{ urlReceived: string; ctxId: string }> => fs.readdirSync(recordDir)
    .flatMap((f) => fs.readFileSync(path.join(recordDir, f), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)));
  await waitFor(() => read().some((r) => r.urlReceived === '/obj?fields'));
  t.equal(headers['x-request-id'], read().find((r) => r.urlReceived === '/obj?fields')?.ctxId);
});

t.test('the access log\'s %u says http:// for an h2c transaction, as for HTTP/1.1 on the same port', async (t) => {
  const resolve = ['--resolve', `${HOST}:${port}:127.0.0.1`];
  const h2 = await curl(['--http2-prior-knowledge', ...resolve, `http://${HOST}:${port}/obj?u=h2`]);
  t.match(h2.stdout, /^HTTP\/2 200/);
  const h1 = await curl(['--http1.1', ...resolve, `http://${HOST}:${port}/obj?u=h1`]);
  t.match(h1.stdout, /^HTTP\/1\.1 200/);
  const file = path.join(server.dir, 'logs', HOST, 'access.log');
  const lines = (): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('?u=')) : []);
  await waitFor(() => lines().length >= 2);
  t.same(lines().sort(), [`http http://${HOST}:${port}/obj?u=h1`, `http2 http://${HOST}:${port}/obj?u=h2`]);
});

t.test('rapid reset over h2c: GOAWAY and the connection closed; the port goes on serving', async (t) => {
  const c = await RawH2.connect(port);
  t.teardown(() => c.close());
  await c.waitFor((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0);
  const burst: Buffer[] = [];
  for (let id = 1; id < 2 * 20_000; id += 2) {
    burst.push(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, id, getHeaders(HOST, '/obj', 'http')), rstStream(id, ERR.CANCEL));
  }
  c.send(Buffer.concat(burst));
  const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY, 20_000);
  // nghttp2's reset budget (lib/worker/h2-server.ts RESET_BUDGET_MAX) closes it in the same read.
  t.equal(goaway === undefined ? -1 : goawayCode(goaway), ERR.INTERNAL_ERROR, 'GOAWAY INTERNAL_ERROR (nghttp2\'s code for a flood)');
  t.ok(await c.waitClosed(), 'the connection is closed');
  const after = await curl(['--http2-prior-knowledge', '-H', `Host: ${HOST}`, `http://127.0.0.1:${port}/obj`]);
  t.match(after.stdout, /^HTTP\/2 200/);
});

/** A connection past the server's SETTINGS; `flood` is sent while this client does not read. */
async function abuse(flood: Buffer, stopReading: boolean): Promise<{ goaway: number; closed: boolean; c: RawH2 }> {
  const c = await RawH2.connect(port);
  await c.waitFor((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0);
  // Not reading is what makes a flood of frames that need an answer (SETTINGS, PING) pile up.
  if (stopReading) c.socket.pause();
  c.send(flood);
  if (stopReading) setImmediate(() => c.socket.resume());
  const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY);
  return { goaway: goaway === undefined ? -1 : goawayCode(goaway), closed: await c.waitClosed(), c };
}

t.test('SETTINGS, PING and CONTINUATION floods each get GOAWAY and the connection closed; the port goes on serving', async (t) => {
  const settings = await abuse(Buffer.concat(Array.from({ length: 100_000 }, () => frame(FRAME.SETTINGS, 0, 0))), true);
  t.not(settings.goaway, -1, 'SETTINGS flood: GOAWAY');
  t.ok(settings.closed, 'SETTINGS flood: closed');
  const ping = await abuse(Buffer.concat(Array.from({ length: 100_000 }, () => frame(FRAME.PING, 0, 0, Buffer.alloc(8)))), true);
  t.not(ping.goaway, -1, 'PING flood: GOAWAY');
  t.ok(ping.closed, 'PING flood: closed');
  const field = literalField('x-a', 'abc', false);
  const continuation = await abuse(Buffer.concat([frame(FRAME.HEADERS, 0, 1, getHeaders(HOST, '/obj', 'http')),
    ...Array.from({ length: 10_000 }, () => frame(FRAME.CONTINUATION, 0, 1, field))]), false);
  t.not(continuation.goaway, -1, 'CONTINUATION flood: GOAWAY');
  t.ok(continuation.closed, 'CONTINUATION flood: closed');
  const after = await curl(['--http2-prior-knowledge', '-H', `Host: ${HOST}`, `http://127.0.0.1:${port}/obj`]);
  t.match(after.stdout, /^HTTP\/2 200/);
});

t.test('an HPACK bomb (one large table entry referenced many times) has its stream reset; the connection goes on', async (t) => {
  // A 4000-byte field into the dynamic table, then 1000 one-byte references to it (index 62):
  // 4 MB of fields from 5 KB on the wire, far past maxHeaderListSize (64 KiB).
  const bomb = Buffer.concat([getHeaders(HOST, '/obj', 'http'), literalField('x-b', 'b'.repeat(4000), true), Buffer.alloc(1000, 0xbe)]);
  const c = await RawH2.connect(port);
  t.teardown(() => c.close());
  // Once the client has acknowledged the SETTINGS (sent right after the server's arrive) node
  // holds it to maxHeaderListSize.
  await c.waitFor((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0);
  c.send(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, 1, bomb));
  const rst = await c.waitFor((f) => f.type === FRAME.RST_STREAM && f.stream === 1);
  t.equal(rst?.payload.readUInt32BE(0), ERR.ENHANCE_YOUR_CALM);
  c.send(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, 3, getHeaders(HOST, '/obj', 'http')));
  t.ok(await c.waitFor((f) => f.type === FRAME.HEADERS && f.stream === 3), 'the next stream on the connection is answered');

  // Before the acknowledgement node applies only its own bounds (memory per connection, field
  // count): the pipeline answers 431, whole (END_STREAM before anything else on the stream).
  const early = await RawH2.connect(port, { autoAck: false });
  t.teardown(() => early.close());
  early.send(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, 1, bomb));
  const end = await early.waitFor((f) => f.stream === 1 && (f.type === FRAME.RST_STREAM || (f.flags & FLAG.END_STREAM) !== 0));
  t.equal(end?.type, FRAME.DATA, 'the answer ends with END_STREAM');
  t.match(Buffer.concat(early.frames.filter((f) => f.type === FRAME.DATA && f.stream === 1).map((f) => f.payload)).toString(), /^431 /);
});

t.test('a header list over maxHeaderListSize resets its stream only: the next stream of the connection is answered', async (t) => {
  // Ten 8,000-byte fields (maxHeaderListSize is 65,536) in a HEADERS frame and CONTINUATION
  // frames of 16 KiB (the default frame size), as any client splits a large header block. (One
  // field over 64 KiB is no header list limit: nghttp2 takes it for a COMPRESSION_ERROR of the
  // connection.)
  const fields = Array.from({ length: 10 }, (_, i) => literalField(`x-big-${i}`, 'b'.repeat(8000), false));
  const block = Buffer.concat([getHeaders(HOST, '/obj', 'http'), ...fields]);
  const c = await RawH2.connect(port);
  t.teardown(() => c.close());
  await c.waitFor((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0);
  await c.waitFor((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) !== 0);
  const frames: Buffer[] = [];
  for (let at = 0; at < block.length; at += 16_384) {
    const last = at + 16_384 >= block.length;
    frames.push(frame(at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION, (at === 0 ? FLAG.END_STREAM : 0) | (last ? FLAG.END_HEADERS : 0), 1, block.subarray(at, at + 16_384)));
  }
  c.send(Buffer.concat(frames));
  const rst = await c.waitFor((f) => f.type === FRAME.RST_STREAM && f.stream === 1);
  t.ok(rst !== undefined, 'the oversized stream is reset');
  c.send(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, 3, getHeaders(HOST, '/obj', 'http')));
  const answer = await c.waitFor((f) => (f.type === FRAME.HEADERS && f.stream === 3) || f.type === FRAME.GOAWAY);
  t.equal(answer?.type, FRAME.HEADERS, 'the next stream is answered, no GOAWAY');
  t.notOk(c.frames.some((f) => f.type === FRAME.GOAWAY), 'the connection was not closed');
});

t.test('a reload turns h2c off (the preface gets an HTTP/1 answer) and on again, with the port open', async (t) => {
  await reload(false);
  const off = await rawRequest(port, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
  t.match(off.text, /^HTTP\/1\.1 4\d\d /, 'HTTP/1 refuses the preface');
  const h1 = await curl(['--http1.1', '-H', `Host: ${HOST}`, `http://127.0.0.1:${port}/obj`]);
  t.match(h1.stdout, /^HTTP\/1\.1 200/);
  await reload(true);
  const on = await curl(['--http2-prior-knowledge', '-H', `Host: ${HOST}`, `http://127.0.0.1:${port}/obj`]);
  t.match(on.stdout, /^HTTP\/2 200/, on.stderr);
});
